// Rules across keys, checked once a configuration is complete (a file and its --set overrides):
// each error names where the keys involved were set.
#include "runtime/config/config.hpp"

#include "common/host_port.hpp"
#include "common/strings.hpp"

#include <string>
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
    return key + " = " + (v ? *v : std::string("?"));
  };
  // The text, after the position where `key` was set (a file position, or the --set).
  auto located = [&](const std::string& key, const std::string& text) {
    auto it = origins.find(key);
    return (it == origins.end() ? std::string() : it->second + ": ") + text;
  };
  std::vector<std::string> errs;
  const auto& t = cfg.train;
  const std::string tmin = "train.dcp_t_min", tmax = "train.dcp_t_max";
  if (t.dcp_t_min > t.dcp_t_max) {
    // The error starts at dcp_t_min's position when it was set, else at dcp_t_max's.
    auto first = origins.count(tmin) ? tmin : tmax;
    auto other = first == tmin ? tmax : tmin;
    errs.push_back(located(first, shown(tmin) + " must be <= " + shown(tmax) + " (" + first
                                    + " from " + origin(first) + ", " + other + " from "
                                    + origin(other) + "): DCP would never expand a group"));
  }
  for (const auto& key : {tmin, tmax}) {
    double v = key == tmin ? t.dcp_t_min : t.dcp_t_max;
    if (t.dcp_fractional && v > 1.0)
      errs.push_back(located(key, shown(key) + " is a fraction of the group size "
                                    "(train.dcp_fractional = true, from " + origin("train.dcp_fractional")
                                    + "): it must be <= 1"));
    else if (!t.dcp_fractional && v > t.group_size)
      errs.push_back(located(key, shown(key) + " is a count of failures (train.dcp_fractional = "
                                    "false, from " + origin("train.dcp_fractional") + "): it must be <= "
                                    + shown("train.group_size") + " (from "
                                    + origin("train.group_size") + ")"));
  }
  // Self-repair needs a step count to take its last steps from.
  if (cfg.sft.self_repair_steps > 0 && cfg.sft.self_repair_steps >= cfg.sft.max_steps) {
    auto first = origins.count("sft.self_repair_steps") ? std::string("sft.self_repair_steps")
                                                        : std::string("sft.max_steps");
    errs.push_back(located(first, shown("sft.self_repair_steps") + " (from "
                                    + origin("sft.self_repair_steps") + ") must be < "
                                    + shown("sft.max_steps") + " (from " + origin("sft.max_steps")
                                    + "): the self-repair steps are the last of max_steps, after "
                                      "the warm start they sample from (max_steps = 0, a time "
                                      "budget only, has no last steps)"));
  }
  // The cluster's addresses and TLS files.
  for (const auto& n : cfg.cluster.nodes)
    if (auto hp = parse_host_port(n); !hp)
      errs.push_back(located("cluster.nodes", "cluster.nodes: " + hp.message()));
    else if (hp->port == 0)
      errs.push_back(located("cluster.nodes", "cluster.nodes: '" + n + "' needs a port"));
  if (auto hp = parse_host_port(cfg.node.listen); !hp)
    errs.push_back(located("node.listen", "node.listen: " + hp.message()));
  if (auto hp = parse_host_port(cfg.serve.listen); !hp)
    errs.push_back(located("serve.listen", "serve.listen: " + hp.message()));
  if (cfg.serve.tls_cert.empty() != cfg.serve.tls_key.empty())
    errs.push_back(located(cfg.serve.tls_cert.empty() ? "serve.tls_key" : "serve.tls_cert",
                           "serve.tls_cert and serve.tls_key go together: set both (HTTPS) or "
                           "neither"));
  for (auto [key, text] : {std::pair<const char*, const std::string*>{"node.join", &cfg.node.join},
                           {"cluster.listen", &cfg.cluster.listen}})
    if (!text->empty())
      if (auto hp = parse_host_port(*text); !hp)
        errs.push_back(located(key, std::string(key) + ": " + hp.message()));
  if (!t.warm_start_sha256.empty()) {
    bool hex = t.warm_start_sha256.size() == 64;
    for (char ch : t.warm_start_sha256)
      hex = hex && ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'));
    if (!hex)
      errs.push_back(located("train.warm_start_sha256",
                             shown("train.warm_start_sha256")
                                 + " is not a SHA-256 (64 lower-case hex digits)"));
    if (t.warm_start.empty())
      errs.push_back(located("train.warm_start_sha256",
                             "train.warm_start_sha256 pins a warm start, but train.warm_start is "
                             "empty (from " + origin("train.warm_start")
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
