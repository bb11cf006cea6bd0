// load_spec, run_config and the figures of one finished run: see experiment_data.hpp. The
// statistics and the result files are in experiment_results.cpp.
#include "runtime/workflows/experiment_data.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "runtime/report/run_data.hpp"

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace leap::runtime::experiment {

namespace {

// Keys the experiment owns: an arm that set them would break the comparison's fairness.
const std::vector<std::pair<std::string, std::string>> owned_keys = {
  {"train.max_minutes", "the budget is [experiment] max_minutes, the same for every arm"},
  {"train.max_compiles", "the budget is [experiment] max_compiles, the same for every arm"},
  {"train.seed", "the seeds are [experiment] seeds"},
  {"eval.seed", "the eval seed is [experiment] eval_seed"},
  {"train.warm_start", "every arm starts from the experiment's one warm start"},
  {"train.warm_start_sha256", "every arm starts from the experiment's one warm start"}};

std::string where(const std::string& path, const toml::node& n) {
  auto p = n.source().begin;
  return path + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": ";
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

std::optional<double> number_of(const toml::node& n) {
  if (n.is_integer())
    return static_cast<double>(*n.value<std::int64_t>());
  if (n.is_floating_point())
    return n.value<double>();
  return std::nullopt;
}

} // namespace

result<spec> load_spec(const std::string& path, const config::leap_config& base) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  toml::table root;
  try {
    root = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    auto p = e.source().begin;
    return make_error(path + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": "
                      + std::string(e.description()));
  }
  auto* en = root.get("experiment");
  if (!en)
    return make_error(path + ": an experiment needs an [experiment] section (see "
                             "configs/experiments/paper.toml)");
  if (!en->is_table())
    return make_error(where(path, *en) + "'experiment' must be a table ([experiment])");
  const auto& e = *en->as_table();
  spec s;
  std::vector<std::string> errs;
  const std::vector<std::string> known = {"arms",        "seeds",     "max_minutes",
                                          "max_compiles", "target_acc1", "eval_seed"};
  for (auto&& [k, v] : e)
    if (std::find(known.begin(), known.end(), std::string(k.str())) == known.end())
      errs.push_back(where(path, v) + "experiment." + std::string(k.str())
                     + ": unknown key (known: " + join(known, ", ") + ")");
  // seeds: a list of integers or a count (1..N).
  if (auto* sn = e.get("seeds")) {
    if (sn->is_integer()) {
      auto n = *sn->value<std::int64_t>();
      if (n < 1 || n > 1000)
        errs.push_back(where(path, *sn) + "experiment.seeds: a count must be in 1..1000");
      for (std::int64_t i = 1; i <= n && n <= 1000; ++i)
        s.seeds.push_back(i);
    } else if (auto* arr = sn->as_array()) {
      std::set<std::int64_t> seen;
      for (auto& el : *arr) {
        if (!el.is_integer() || *el.value<std::int64_t>() < 0) {
          errs.push_back(where(path, el) + "experiment.seeds: expected integers >= 0");
          continue;
        }
        auto v = *el.value<std::int64_t>();
        if (!seen.insert(v).second)
          errs.push_back(where(path, el) + "experiment.seeds: seed " + std::to_string(v)
                         + " is listed twice");
        s.seeds.push_back(v);
      }
      if (arr->empty())
        errs.push_back(where(path, *sn) + "experiment.seeds: the list is empty");
    } else {
      errs.push_back(where(path, *sn) + "experiment.seeds: expected a list of seeds or a count");
    }
  } else {
    errs.push_back(path + ": experiment.seeds: missing (a list of seeds, e.g. [1, 2, 3], or a count)");
  }
  if (auto* n = e.get("max_minutes")) {
    auto v = number_of(*n);
    if (!v || !std::isfinite(*v) || *v < 0)
      errs.push_back(where(path, *n) + "experiment.max_minutes: expected a number >= 0");
    else
      s.max_minutes = *v;
  }
  if (auto* n = e.get("max_compiles")) {
    if (!n->is_integer() || *n->value<std::int64_t>() < 0 ||
        *n->value<std::int64_t>() > std::numeric_limits<int>::max())
      errs.push_back(where(path, *n) + "experiment.max_compiles: expected an integer >= 0");
    else
      s.max_compiles = static_cast<int>(*n->value<std::int64_t>());
  }
  if (auto* n = e.get("target_acc1")) {
    auto v = number_of(*n);
    if (!v || *v < 0 || *v > 1)
      errs.push_back(where(path, *n) + "experiment.target_acc1: expected a number in [0, 1]");
    else
      s.target_acc1 = *v;
  }
  if (auto* n = e.get("eval_seed")) {
    if (!n->is_integer() || *n->value<std::int64_t>() < 0)
      errs.push_back(where(path, *n) + "experiment.eval_seed: expected an integer >= 0");
    else
      s.eval_seed = *n->value<std::int64_t>();
  }
  auto* an = e.get("arms");
  auto* arms = an ? an->as_array() : nullptr;
  if (!an)
    errs.push_back(path + ": experiment.arms: missing ([[experiment.arms]] tables with name and set)");
  else if (!arms || arms->empty())
    errs.push_back(where(path, *an) + "experiment.arms: expected a non-empty array of tables "
                                      "([[experiment.arms]])");
  std::set<std::string> names;
  for (std::size_t i = 0; arms && i < arms->size(); ++i) {
    auto& el = *arms->get(i);
    auto* t = el.as_table();
    if (!t) {
      errs.push_back(where(path, el) + "experiment.arms: expected a table ([[experiment.arms]])");
      continue;
    }
    arm a;
    const std::string at = "experiment.arms[" + std::to_string(i + 1) + "]";
    const std::vector<std::string> arm_keys = {"name", "label", "set", "paper"};
    for (auto&& [k, v] : *t)
      if (std::find(arm_keys.begin(), arm_keys.end(), std::string(k.str())) == arm_keys.end())
        errs.push_back(where(path, v) + at + "." + std::string(k.str())
                       + ": unknown key (known: " + join(arm_keys, ", ") + ")");
    auto* nn = t->get("name");
    if (!nn || !nn->is_string() || !valid_name(*nn->value<std::string>())) {
      errs.push_back(where(path, nn ? *nn : el) + at + ".name: expected a name of letters, "
                                                 "digits, '_' and '-' (it names the run directory)");
      continue;
    }
    a.name = *nn->value<std::string>();
    const std::string arm_at = "arm '" + a.name + "'";
    if (!names.insert(a.name).second)
      errs.push_back(where(path, *nn) + arm_at + ": the name is used by an earlier arm");
    a.label = a.name;
    if (auto* ln = t->get("label")) {
      if (!ln->is_string())
        errs.push_back(where(path, *ln) + arm_at + ": label: expected a string");
      else
        a.label = *ln->value<std::string>();
    }
    if (auto* sn = t->get("set")) {
      auto* sa = sn->as_array();
      if (!sa)
        errs.push_back(where(path, *sn) + arm_at + ": set: expected an array of "
                                                   "\"section.key=value\" strings");
      auto cfg = base;
      for (std::size_t j = 0; sa && j < sa->size(); ++j) {
        auto& sv = *sa->get(j);
        if (!sv.is_string()) {
          errs.push_back(where(path, sv) + arm_at + ": set: expected \"section.key=value\" strings");
          continue;
        }
        auto assignment = *sv.value<std::string>();
        auto key = std::string(trim(assignment.substr(0, assignment.find('='))));
        bool owned = false;
        for (auto& [k, why] : owned_keys)
          if (key == k) {
            errs.push_back(where(path, sv) + arm_at + ": " + k + ": an arm may not set it (" + why + ")");
            owned = true;
          }
        if (owned)
          continue;
        if (auto r = config::apply_override(cfg, assignment); !r) {
          // "--set <assignment>: why" -> "arm 'x': <assignment>: why"
          auto msg = r.message();
          const std::string prefix = "--set " + assignment + ": ";
          if (starts_with(msg, prefix))
            msg = msg.substr(prefix.size());
          errs.push_back(where(path, sv) + arm_at + ": " + key + ": " + msg);
          continue;
        }
        a.sets.push_back(assignment);
      }
    }
    if (auto* pn = t->get("paper")) {
      auto* pt = pn->as_table();
      if (!pt) {
        errs.push_back(where(path, *pn) + arm_at + ": paper: expected a table of numbers");
      } else {
        const std::vector<std::pair<std::string, std::optional<double>*>> fields = {
          {"acc1", &a.paper.acc1},          {"acc2", &a.paper.acc2},
          {"acc3", &a.paper.acc3},          {"turns_per_pass", &a.paper.turns_per_pass},
          {"activated", &a.paper.activated}, {"recovery", &a.paper.recovery}};
        for (auto&& [k, v] : *pt) {
          auto it = std::find_if(fields.begin(), fields.end(),
                                 [&](auto& f) { return f.first == k.str(); });
          auto num = number_of(v);
          if (it == fields.end())
            errs.push_back(where(path, v) + arm_at + ": paper." + std::string(k.str())
                           + ": unknown key (known: acc1, acc2, acc3, turns_per_pass, activated, "
                             "recovery)");
          else if (!num)
            errs.push_back(where(path, v) + arm_at + ": paper." + std::string(k.str())
                           + ": expected a number");
          else
            *it->second = *num;
        }
      }
    }
    s.arms.push_back(std::move(a));
  }
  if (!errs.empty()) {
    // In file order (toml++ walks a table's keys sorted by name); errors without a position first.
    auto pos = [&](const std::string& e) {
      std::pair<long, long> p{0, 0};
      if (starts_with(e, path + ":"))
        std::sscanf(e.c_str() + path.size() + 1, "%ld:%ld", &p.first, &p.second);
      return p;
    };
    std::stable_sort(errs.begin(), errs.end(),
                     [&](const std::string& a, const std::string& b) { return pos(a) < pos(b); });
    return make_error(join(errs, "\n"));
  }
  // Rules across keys, per arm (the run config adds only budget, seeds and the warm start).
  for (auto& a : s.arms)
    if (auto r = run_config(base, s, a, s.seeds.front(), ""); !r)
      errs.push_back(path + ": " + r.message());
  if (!errs.empty())
    return make_error(join(errs, "\n"));
  return s;
}

result<config::leap_config> run_config(const config::leap_config& base, const spec& s,
                                       const arm& a, std::int64_t seed,
                                       const std::string& warm_start) {
  auto cfg = base;
  config::key_origins origins;
  for (auto& set : a.sets)
    if (auto r = config::apply_override(cfg, set, &origins); !r)
      return make_error("arm '" + a.name + "': " + r.message());
  if (s.max_minutes > 0)
    cfg.train.max_minutes = s.max_minutes;
  if (s.max_compiles > 0)
    cfg.train.max_compiles = s.max_compiles;
  cfg.train.seed = static_cast<decltype(cfg.train.seed)>(seed);
  cfg.eval.seed = static_cast<decltype(cfg.eval.seed)>(s.eval_seed);
  cfg.train.warm_start = warm_start;
  if (auto r = config::check_consistency(cfg, origins); !r)
    return make_error("arm '" + a.name + "': " + r.message());
  return cfg;
}

std::string config_hash(const config::leap_config& cfg) {
  auto c = cfg;
  c.train.warm_start.clear();
  return sha256_hex(config::to_toml(c)).substr(0, 16);
}

result<run_result> read_run_result(const std::string& run_dir) {
  const std::string path = run_dir + "/eval.json";
  auto text = read_file(path);
  if (!text)
    return text.err();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.value("complete", false))
    return make_error(path + ": not a complete result");
  run_result r;
  try {
    r.arm = j.at("arm").get<std::string>();
    r.seed = j.at("seed").get<std::int64_t>();
    auto& ev = j.at("eval");
    r.acc1 = ev.at("acc_at_1").get<double>();
    r.acc2 = ev.at("acc_at_2").get<double>();
    r.acc3 = ev.at("acc_at_3").get<double>();
    r.turns_per_pass = ev.at("turns_per_pass").get<double>();
    auto& tr = j.at("train");
    r.steps = tr.at("steps").get<long long>();
    r.train_minutes = tr.at("minutes").get<double>();
    r.activated = tr.at("activated_groups").get<double>();
    if (!tr.at("recovery").is_null())
      r.recovery = tr.at("recovery").get<double>();
    r.compiles_turn1 = tr.at("compile_requests_turn1").get<long long>();
    r.compiles_later = tr.at("compile_requests_later").get<long long>();
    if (!tr.at("minutes_to_target").is_null())
      r.minutes_to_target = tr.at("minutes_to_target").get<double>();
    r.commit = j.at("commit").get<std::string>();
    r.config_hash = j.at("config_hash").get<std::string>();
    r.task_suite = j.at("task_suite").get<std::string>();
  } catch (const std::exception& e) {
    return make_error(path + ": " + e.what());
  }
  return r;
}

result<void> add_training_figures(const std::string& run_dir, double target, run_result& r) {
  auto run = report::load_run(run_dir);
  if (!run)
    return run.err();
  r.steps = static_cast<long long>(run->steps.size());
  r.train_minutes = run->wall_seconds.empty() ? 0 : run->wall_seconds.back() / 60.0;
  double act = 0, rec = 0;
  int rec_n = 0;
  r.compiles_turn1 = r.compiles_later = 0;
  r.minutes_to_target.reset();
  for (std::size_t i = 0; i < run->steps.size(); ++i) {
    const auto& st = run->steps[i];
    act += st.activated_groups;
    if (st.recovery) {
      rec += *st.recovery;
      ++rec_n;
    }
    r.compiles_turn1 += st.compile_requests_turn1();
    r.compiles_later += st.compiles_later_turns;
    // Running Acc@1: the mean of the last (up to) 3 steps, as `leap report`'s summary.
    std::size_t k = std::min<std::size_t>(3, i + 1);
    double acc = 0;
    for (std::size_t j = i + 1 - k; j <= i; ++j)
      acc += run->steps[j].acc_at_1;
    acc /= static_cast<double>(k);
    if (target > 0 && !r.minutes_to_target && acc >= target)
      r.minutes_to_target = run->wall_seconds[i] / 60.0;
  }
  r.activated = run->steps.empty() ? 0 : act / static_cast<double>(run->steps.size());
  r.recovery = rec_n ? std::optional<double>(rec / rec_n) : std::nullopt;
  return {};
}

} // namespace leap::runtime::experiment
