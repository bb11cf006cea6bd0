// Rules across keys, checked once a configuration is complete (a file and its --set overrides):
// each error reads as a file's do ("<where the key was set>: [train] dcp_t_min: must be ...") and
// names where the other keys involved were set.
#include "runtime/config/config.hpp"

#include "common/host_port.hpp"
#include "common/strings.hpp"
#include "common/toml_schema.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace leap::config {

leap::result<void> check_consistency(const leap_config& cfg, const key_origins& origins) {
  auto origin = [&](const std::string& key) -> std::string {
    auto it = origins.find(key);
    return it == origins.end() ? std::string("the default") : it->second;
  };
  auto shown = [&](const std::string& key) {
    auto v = get_value_toml(cfg, key);
    return v ? *v : std::string("?");
  };
  // "<where key was set>: [section] key: <text>", as a file's errors read (no position when the
  // key holds its default).
  auto located = [&](const std::string& key, const std::string& text) {
    auto it = origins.find(key);
    auto dot = key.find('.');
    const std::string label =
        toml_schema::key_path().child(key.substr(0, dot)).key(key.substr(dot + 1));
    return (it == origins.end() ? std::string() : it->second + ": ") + label + ": " + text;
  };
  std::vector<std::string> errs;
  const auto& t = cfg.train;
  const std::string tmin = "train.dcp_t_min", tmax = "train.dcp_t_max";
  if (t.dcp_t_min > t.dcp_t_max) {
    // The error is about dcp_t_min when it was set, else about dcp_t_max.
    auto first = origins.count(tmin) ? tmin : tmax;
    auto other = first == tmin ? tmax : tmin;
    errs.push_back(located(first, (first == tmin ? "must be at most " : "must be at least ")
                                    + other + " = " + shown(other) + " (got " + shown(first) + "; "
                                    + first + " from " + origin(first) + ", " + other + " from "
                                    + origin(other) + "): DCP would never expand a group"));
  }
  for (const auto& key : {tmin, tmax}) {
    double v = key == tmin ? t.dcp_t_min : t.dcp_t_max;
    if (t.dcp_fractional && v > 1.0)
      errs.push_back(located(key, "must be at most 1 (got " + shown(key) + "): it is a fraction of "
                                  "the group size (train.dcp_fractional = true, from "
                                  + origin("train.dcp_fractional") + ")"));
    else if (!t.dcp_fractional && v > t.group_size)
      errs.push_back(located(key, "must be at most train.group_size = " + shown("train.group_size")
                                    + " (got " + shown(key) + "; train.group_size from "
                                    + origin("train.group_size") + "): it is a count of failures "
                                    "(train.dcp_fractional = false, from "
                                    + origin("train.dcp_fractional") + ")"));
  }
  // Self-repair needs a step count to take its last steps from.
  if (cfg.sft.self_repair_steps > 0 && cfg.sft.self_repair_steps >= cfg.sft.max_steps) {
    const std::string srs = "sft.self_repair_steps", ms = "sft.max_steps";
    // About self_repair_steps when it was set, else about max_steps.
    const bool about_srs = origins.count(srs) > 0;
    const std::string rule = about_srs
        ? "must be less than " + ms + " = " + shown(ms) + " (got " + shown(srs)
        : "must be greater than " + srs + " = " + shown(srs) + " (got " + shown(ms);
    errs.push_back(located(about_srs ? srs : ms,
                           rule + "; " + srs + " from " + origin(srs) + ", " + ms + " from "
                             + origin(ms) + "): the self-repair steps are the last of max_steps, "
                             "after the warm start they sample from (max_steps = 0, a time "
                             "budget only, has no last steps)"));
  }
  // A corpus with nothing in it.
  if (!cfg.sft.bundled_tasks && cfg.sft.tasks.empty() && cfg.sft.generated_tasks == 0)
    errs.push_back(located("sft.bundled_tasks",
                           "is false, with sft.tasks empty (from " + origin("sft.tasks")
                             + ") and sft.generated_tasks = 0 (from "
                             + origin("sft.generated_tasks")
                             + "): the corpus would be empty; name tasks in sft.tasks, set "
                               "sft.generated_tasks, or leave sft.bundled_tasks true"));
  // Paraphrases and written forms are of the stage's generated tasks.
  for (auto [key, n, what] : {std::tuple{"sft.generated_paraphrases", cfg.sft.generated_paraphrases, "paraphrases"},
                              std::tuple{"sft.generated_written", cfg.sft.generated_written, "written forms"},
                              std::tuple{"sft.generated_notation", cfg.sft.generated_notation, "notation forms"}})
    if (n > cfg.sft.generated_tasks)
      errs.push_back(located(key, "is " + std::to_string(n) + ", more than sft.generated_tasks = "
                                    + std::to_string(cfg.sft.generated_tasks) + " (from " + origin("sft.generated_tasks")
                                    + "): " + what + " are of the first N of those tasks; lower it or raise "
                                                     "sft.generated_tasks"));
  // sft.generated_family_weights: "family=weight", a known family once, a positive weight.
  {
    std::vector<std::string> listed;
    for (const auto& entry : cfg.sft.generated_family_weights) {
      auto fw = parse_family_weight(entry);
      if (!fw)
        errs.push_back(located("sft.generated_family_weights", fw.message()));
      else if (std::find(listed.begin(), listed.end(), fw->family) != listed.end())
        errs.push_back(located("sft.generated_family_weights",
                               "family " + fw->family + " is listed twice"));
      else
        listed.push_back(fw->family);
    }
  }
  // The cluster's addresses and TLS files.
  for (const auto& n : cfg.cluster.nodes)
    if (auto hp = parse_host_port(n); !hp)
      errs.push_back(located("cluster.nodes", hp.message()));
    else if (hp->port == 0)
      errs.push_back(located("cluster.nodes", "'" + n + "' needs a port"));
  if (auto hp = parse_host_port(cfg.node.listen); !hp)
    errs.push_back(located("node.listen", hp.message()));
  if (auto hp = parse_host_port(cfg.serve.listen); !hp)
    errs.push_back(located("serve.listen", hp.message()));
  if (cfg.serve.tls_cert.empty() != cfg.serve.tls_key.empty())
    errs.push_back(located(cfg.serve.tls_cert.empty() ? "serve.tls_key" : "serve.tls_cert",
                           "serve.tls_cert and serve.tls_key go together: set both (HTTPS) or "
                           "neither"));
  for (auto [key, text] : {std::pair<const char*, const std::string*>{"node.join", &cfg.node.join},
                           {"cluster.listen", &cfg.cluster.listen}})
    if (!text->empty())
      if (auto hp = parse_host_port(*text); !hp)
        errs.push_back(located(key, hp.message()));
  if (!t.warm_start_sha256.empty()) {
    bool hex = t.warm_start_sha256.size() == 64;
    for (char ch : t.warm_start_sha256)
      hex = hex && ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'));
    if (!hex)
      errs.push_back(located("train.warm_start_sha256",
                             "must be a SHA-256, 64 lower-case hex digits (got "
                                 + shown("train.warm_start_sha256") + ")"));
    if (t.warm_start.empty())
      errs.push_back(located("train.warm_start_sha256",
                             "pins a warm start, but train.warm_start is empty (from "
                                 + origin("train.warm_start")
                                 + "): set the checkpoint it pins, or clear the pin"));
  }
  const auto& c = cfg.cluster;
  int tls_set = !c.tls_cert.empty() + !c.tls_key.empty() + !c.tls_ca.empty();
  if (tls_set != 0 && tls_set != 3) {
    auto first = !c.tls_cert.empty() ? "cluster.tls_cert"
                 : !c.tls_key.empty() ? "cluster.tls_key" : "cluster.tls_ca";
    errs.push_back(located(first, "cluster.tls_cert, cluster.tls_key and cluster.tls_ca go "
                                  "together: set all three (TLS with mutual authentication) or "
                                  "none"));
  }
  if (!errs.empty())
    return make_error(join(errs, "\n"));
  return {};
}

} // namespace leap::config
