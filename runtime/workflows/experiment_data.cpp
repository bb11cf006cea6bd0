// load_spec, run_config and the figures of one finished run: see experiment_data.hpp. The
// statistics and the result files are in experiment_results.cpp.
#include "runtime/workflows/experiment_data.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "common/toml_schema.hpp"
#include "runtime/report/run_data.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>

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

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

using toml_schema::checked_table;
using toml_schema::value_kind;

// The [experiment] section (common/toml_schema.hpp). The file's other sections are the config's.
const toml_schema::table_schema& spec_schema() {
  static const toml_schema::table_schema s = [] {
    toml_schema::table_schema root;
    root.open = true;
    auto& e = root.table("experiment", "see configs/experiments/paper.toml", true);
    toml_schema::key_rule count;
    count.min = 1;
    count.max = 1000;
    e.key("seeds", value_kind::integer_list, "a list of seeds, e.g. [1, 2, 3], or a count")
      .required().non_empty().distinct().at_least(0).or_else(value_kind::integer, count);
    e.key("max_minutes", value_kind::floating).at_least(0);
    e.key("max_compiles", value_kind::integer).at_least(0).fits<int>();
    e.key("target_acc1", value_kind::floating).at_least(0).at_most(1);
    e.key("eval_seed", value_kind::integer).at_least(0);
    auto& arm = e.table_array("arms", "[[experiment.arms]] tables with name and set", 1);
    arm.key("name", value_kind::string, "it names the run directory").required();
    arm.key("label", value_kind::string);
    arm.key("set", value_kind::string_list);
    auto& paper = arm.table("paper");
    for (const char* k : {"acc1", "acc2", "acc3", "turns_per_pass", "activated", "recovery"})
      paper.key(k, value_kind::floating);
    return root;
  }();
  return s;
}

// One [[experiment.arms]] table into `s.arms`, its overrides checked on `base` as --set checks
// them; `names` holds the earlier arms' names and where they are.
void read_arm(const checked_table& t, const config::leap_config& base,
              std::map<std::string, std::string>& names, toml_schema::diagnostics& diag,
              spec& s) {
  auto name = t.get<std::string>("name");
  if (!name)
    return; // missing or not a string: reported
  const std::string name_key = t.path.key("name");
  if (!valid_name(*name)) {
    diag.add(*t.node("name"), name_key,
             "must be 1 to 64 letters, digits, '_' and '-' (it names the run directory; got \""
               + *name + "\")");
    return;
  }
  auto [earlier, fresh] = names.emplace(*name, t.path.table());
  if (!fresh)
    diag.add(*t.node("name"), name_key,
             "\"" + *name + "\" is the name of an earlier arm, " + earlier->second);
  arm a;
  a.name = *name;
  a.label = t.get<std::string>("label").value_or(a.name);
  auto sets = t.get<std::vector<std::string>>("set").value_or(std::vector<std::string>{});
  auto cfg = base;
  for (std::size_t j = 0; j < sets.size(); ++j) {
    const std::string& assignment = sets[j];
    const toml::node& at = *t.node("set")->as_array()->get(j);
    const std::string element = "element [" + std::to_string(j) + "]: ";
    auto key = std::string(trim(assignment.substr(0, assignment.find('='))));
    auto dot = key.find('.');
    auto label = dot == std::string::npos
                   ? key
                   : toml_schema::key_path().child(key.substr(0, dot)).key(key.substr(dot + 1));
    bool owned = false;
    for (auto& [k, why] : owned_keys)
      if (key == k) {
        diag.add(at, t.path.key("set"), element + label + ": an arm may not set it (" + why + ")");
        owned = true;
      }
    if (owned)
      continue;
    if (auto r = config::apply_override(cfg, assignment); !r) {
      // "--set <assignment>: [train] dcp: why" -> "element [j]: [train] dcp: why"
      auto msg = r.message();
      const std::string prefix = "--set " + assignment + ": ";
      if (starts_with(msg, prefix))
        msg = msg.substr(prefix.size());
      diag.add(at, t.path.key("set"), element + msg);
      continue;
    }
    a.sets.push_back(assignment);
  }
  if (const checked_table* p = t.table("paper"))
    for (auto [k, field] : {std::pair<const char*, std::optional<double>*>{"acc1", &a.paper.acc1},
                            {"acc2", &a.paper.acc2},
                            {"acc3", &a.paper.acc3},
                            {"turns_per_pass", &a.paper.turns_per_pass},
                            {"activated", &a.paper.activated},
                            {"recovery", &a.paper.recovery}})
      *field = p->get<double>(k);
  s.arms.push_back(std::move(a));
}

} // namespace

result<spec> load_spec(const std::string& path, const config::leap_config& base) {
  auto root = toml_schema::parse_file(path, "experiment file");
  if (!root)
    return root.err();
  toml_schema::diagnostics diag(path);
  checked_table c = toml_schema::check(*root, spec_schema(), diag);
  spec s;
  std::vector<const checked_table*> arm_tables;
  if (const checked_table* e = c.table("experiment")) {
    if (auto n = e->get<std::int64_t>("seeds"))
      for (std::int64_t i = 1; i <= *n; ++i)
        s.seeds.push_back(i);
    e->read("seeds", s.seeds);
    e->read("max_minutes", s.max_minutes);
    if (auto m = e->get<std::int64_t>("max_compiles"))
      s.max_compiles = static_cast<int>(*m);
    e->read("target_acc1", s.target_acc1);
    e->read("eval_seed", s.eval_seed);
    std::map<std::string, std::string> names;
    for (const auto& t : e->array("arms")) {
      const std::size_t before = s.arms.size();
      read_arm(t, base, names, diag, s);
      if (s.arms.size() > before)
        arm_tables.push_back(&t);
    }
  }
  if (!diag.empty())
    return diag.error();
  // Rules across keys, per arm (the run config adds only budget, seeds and the warm start: the
  // file's own, which its pin refers to, or one the experiment makes, which nothing pins).
  for (std::size_t i = 0; i < s.arms.size(); ++i)
    if (auto r = run_config(base, s, s.arms[i], s.seeds.front(), base.train.warm_start); !r) {
      // "arm 'x': --set <assignment>: [train] dcp_t_min: why", one per line: at the set element
      // the rule names first (every one was applied), else at the arm's table.
      const checked_table& t = *arm_tables[i];
      const std::string prefix = "arm '" + s.arms[i].name + "': ";
      for (auto msg : split_lines(r.message())) {
        if (starts_with(msg, prefix))
          msg = msg.substr(prefix.size());
        const auto& sets = s.arms[i].sets;
        std::size_t j = 0;
        while (j < sets.size() && !starts_with(msg, "--set " + sets[j] + ": "))
          ++j;
        if (j == sets.size()) {
          diag.add(t.position(), t.path.key("set"), msg);
          continue;
        }
        diag.add(*t.node("set")->as_array()->get(j), t.path.key("set"),
                 "element [" + std::to_string(j) + "]: " + msg.substr(sets[j].size() + 8));
      }
    }
  if (!diag.empty())
    return diag.error();
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

namespace {

// `leap eval --json`'s figures into r (throws nlohmann's exceptions on a missing field).
void read_eval_figures(const nlohmann::json& ev, run_result& r) {
  r.acc1 = ev.at("acc_at_1").get<double>();
  r.acc2 = ev.at("acc_at_2").get<double>();
  r.acc3 = ev.at("acc_at_3").get<double>();
  r.turns_per_pass = ev.at("turns_per_pass").get<double>();
  // Per set (runtime/workflows/evaluation.hpp's eval_set_of); absent in older results.
  if (auto sets = ev.find("per_set"); sets != ev.end() && sets->is_object())
    for (auto [name, acc1, acc3] :
         {std::tuple<const char*, std::optional<double>*, std::optional<double>*>{
            "bundled", &r.bundled_acc1, &r.bundled_acc3},
          {"generated_composition", &r.comp_acc1, &r.comp_acc3}})
      if (auto it = sets->find(name); it != sets->end()) {
        *acc1 = it->at("acc_at_1").get<double>();
        *acc3 = it->at("acc_at_3").get<double>();
      }
}

// A result file of `leap experiment` as JSON; an error unless it is complete.
result<nlohmann::json> read_complete(const std::string& path) {
  auto text = read_file(path);
  if (!text)
    return text.err();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.value("complete", false))
    return make_error(path + ": not a complete result");
  return j;
}

} // namespace

config::leap_config warm_start_eval_config(const config::leap_config& base, const spec& s) {
  auto cfg = base;
  cfg.eval.seed = static_cast<decltype(cfg.eval.seed)>(s.eval_seed);
  return cfg;
}

result<run_result> read_warm_start_eval(const std::string& path) {
  auto j = read_complete(path);
  if (!j)
    return j.err();
  run_result r;
  r.arm = "warm start";
  try {
    read_eval_figures(j->at("eval"), r);
    r.config_hash = j->at("config_hash").get<std::string>();
    r.task_suite = j->at("eval").value("task_suite", "");
  } catch (const std::exception& e) {
    return make_error(path + ": " + e.what());
  }
  return r;
}

result<run_result> read_run_result(const std::string& run_dir) {
  const std::string path = run_dir + "/eval.json";
  auto jr = read_complete(path);
  if (!jr)
    return jr.err();
  const auto& j = *jr;
  run_result r;
  try {
    r.arm = j.at("arm").get<std::string>();
    r.seed = j.at("seed").get<std::int64_t>();
    read_eval_figures(j.at("eval"), r);
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
    // Absent in results written before held-out evaluation during training existed.
    for (auto [key, field] : {std::pair<const char*, std::optional<double>*>{"heldout_acc1", &r.heldout_acc1},
                              {"heldout_acc3", &r.heldout_acc3},
                              {"heldout_compiles", &r.heldout_compiles}})
      if (auto it = tr.find(key); it != tr.end() && !it->is_null())
        *field = it->get<double>();
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
  r.heldout_acc1.reset();
  r.heldout_acc3.reset();
  r.heldout_compiles.reset();
  for (std::size_t i = 0; i < run->steps.size(); ++i) {
    const auto& st = run->steps[i];
    act += st.activated_groups;
    if (st.recovery) {
      rec += *st.recovery;
      ++rec_n;
    }
    r.compiles_turn1 += st.compile_requests_turn1();
    r.compiles_later += st.compiles_later_turns;
    if (st.heldout) {
      r.heldout_acc1 = st.heldout->acc_at_1;
      r.heldout_acc3 = st.heldout->acc_at_3;
      r.heldout_compiles = r.heldout_compiles.value_or(0)
                           + static_cast<double>(st.heldout->compile_requests());
    }
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
