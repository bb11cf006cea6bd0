// load_spec, run_config, the run figures, the statistics and the result files: see
// experiment_data.hpp.
#include "runtime/commands/experiment_data.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/report/run_data.hpp"
#include "runtime/report/svg_chart.hpp"

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
  {"train.warm_start", "every arm starts from the experiment's one warm start"}};

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

double t95(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                                 2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
                                 2.093,  2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
                                 2.048,  2.045, 2.042};
  if (df < 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (df <= 30)
    return table[df - 1];
  if (df <= 40)
    return 2.021;
  if (df <= 60)
    return 2.000;
  if (df <= 120)
    return 1.980;
  return 1.960;
}

std::optional<interval> mean_interval(const std::vector<double>& xs) {
  if (xs.empty())
    return std::nullopt;
  interval iv;
  iv.n = static_cast<int>(xs.size());
  for (double x : xs)
    iv.mean += x;
  iv.mean /= iv.n;
  if (iv.n >= 2) {
    double ss = 0;
    for (double x : xs)
      ss += (x - iv.mean) * (x - iv.mean);
    iv.half_width = t95(iv.n - 1) * std::sqrt(ss / (iv.n - 1)) / std::sqrt(double(iv.n));
  }
  return iv;
}

const std::vector<std::string>& metric_keys() {
  static const std::vector<std::string> k = {"acc1",      "acc2",     "acc3",
                                             "turns_per_pass", "activated", "recovery",
                                             "compiles_turn1", "compiles_later",
                                             "minutes_to_target"};
  return k;
}

namespace {

std::optional<double> metric_of(const run_result& r, const std::string& k) {
  if (k == "acc1") return r.acc1;
  if (k == "acc2") return r.acc2;
  if (k == "acc3") return r.acc3;
  if (k == "turns_per_pass") return r.turns_per_pass > 0 ? std::optional<double>(r.turns_per_pass) : std::nullopt;
  if (k == "activated") return r.activated;
  if (k == "recovery") return r.recovery;
  if (k == "compiles_turn1") return static_cast<double>(r.compiles_turn1);
  if (k == "compiles_later") return static_cast<double>(r.compiles_later);
  if (k == "minutes_to_target") return r.minutes_to_target;
  return std::nullopt;
}

// Our figure for a metric as text: rates in percent, counts as integers, minutes with 1 decimal.
std::string cell(const std::optional<interval>& iv, const std::string& k) {
  if (!iv)
    return "–";
  const bool rate = k == "acc1" || k == "acc2" || k == "acc3" || k == "activated" || k == "recovery";
  const double scale = rate ? 100 : 1;
  const int dec = rate ? 1 : (k == "turns_per_pass" ? 2 : (k == "minutes_to_target" ? 1 : 0));
  std::string s = format_fixed(iv->mean * scale, dec);
  if (iv->half_width)
    s += " ± " + format_fixed(*iv->half_width * scale, dec);
  return s;
}

std::string opt_text(const std::optional<double>& v, int dec) {
  return v ? format_fixed(*v, dec) : std::string("–");
}

std::string csv_num(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v))
    return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  return "\"" + replace_all(s, "\"", "\"\"") + "\"";
}

std::string paper_acc(const paper_numbers& p) {
  if (!p.acc1 && !p.acc2 && !p.acc3)
    return "–";
  return opt_text(p.acc1, 1) + " / " + opt_text(p.acc2, 1) + " / " + opt_text(p.acc3, 1);
}

std::vector<std::string> distinct(const std::vector<const run_result*>& runs,
                                  std::string run_result::*field) {
  std::vector<std::string> out;
  for (auto* r : runs)
    if (std::find(out.begin(), out.end(), r->*field) == out.end())
      out.push_back(r->*field);
  return out;
}

const char* paper_label =
  "Paper: Qwen2.5-7B on KernelBench (B = 32, G = 8, 3 turns), as published: a 7B model on "
  "KernelBench, not comparable in level with this small model on this task suite; compare the "
  "ordering of arms, not the numbers.";

} // namespace

std::vector<arm_summary> summarise(const spec& s, const std::vector<run_result>& runs) {
  std::vector<arm_summary> out;
  for (auto& a : s.arms) {
    arm_summary sum;
    sum.a = &a;
    for (auto& r : runs)
      if (r.arm == a.name)
        sum.runs.push_back(&r);
    for (auto& k : metric_keys()) {
      std::vector<double> xs;
      for (auto* r : sum.runs)
        if (auto v = metric_of(*r, k))
          xs.push_back(*v);
      sum.stat[k] = mean_interval(xs);
      if (k == "minutes_to_target")
        sum.target_reached = static_cast<int>(xs.size());
    }
    out.push_back(std::move(sum));
  }
  return out;
}

std::string render_table_md(const spec& s, const std::vector<arm_summary>& sums,
                            const std::vector<std::string>& meta) {
  std::string o = "# leap experiment\n\n";
  for (auto& m : meta)
    o += "- " + m + "\n";
  o += "\nMean ± 95% Student t interval over seeds (no interval with one seed). Acc@k and turns "
       "per pass: `leap eval` of each run's final checkpoint (eval.split, fixed eval seed), in "
       "%. Activated groups and recovery: mean over the run's training steps, in %. Compile "
       "requests (build-cache hits included) of turn 1 and of later turns, per run. Minutes to "
       "target: learner-step wall-clock until the training Acc@1 (mean of the last 3 steps) "
       "first reached " + format_fixed(100 * s.target_acc1, 0) + "%, over the seeds that "
       "reached it.\n\n";
  o += "| arm | seeds | Acc@1 | Acc@2 | Acc@3 | turns / pass | activated % | recovery % | "
       "compiles turn 1 | compiles later | min to target (reached) | paper Acc@1/2/3 | "
       "paper turns / pass | paper activated % | paper recovery % |\n";
  o += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (auto& sm : sums) {
    o += "| " + sm.a->label + " | " + std::to_string(sm.runs.size()) + "/"
         + std::to_string(s.seeds.size());
    for (auto& k : metric_keys()) {
      o += " | " + cell(sm.stat.at(k), k);
      if (k == "minutes_to_target")
        o += " (" + std::to_string(sm.target_reached) + "/" + std::to_string(sm.runs.size()) + ")";
    }
    o += " | " + paper_acc(sm.a->paper) + " | " + opt_text(sm.a->paper.turns_per_pass, 2) + " | "
         + opt_text(sm.a->paper.activated, 1) + " | " + opt_text(sm.a->paper.recovery, 1) + " |\n";
  }
  o += "\n" + std::string(paper_label) + "\n";
  return o;
}

std::string render_results_csv(const spec& s, const std::vector<arm_summary>& sums) {
  std::string o = "arm,label,seeds_done,seeds";
  for (auto& k : metric_keys())
    o += "," + k + "_mean," + k + "_ci95";
  o += ",target_acc1,target_reached,paper_acc1,paper_acc2,paper_acc3,paper_turns_per_pass,"
       "paper_activated,paper_recovery,commits,config_hashes,task_suites\n";
  for (auto& sm : sums) {
    o += csv_text(sm.a->name) + "," + csv_text(sm.a->label) + "," + std::to_string(sm.runs.size())
         + "," + std::to_string(s.seeds.size());
    for (auto& k : metric_keys()) {
      auto& iv = sm.stat.at(k);
      o += "," + csv_num(iv ? std::optional<double>(iv->mean) : std::nullopt) + ","
           + csv_num(iv ? iv->half_width : std::nullopt);
    }
    auto& p = sm.a->paper;
    o += "," + csv_num(s.target_acc1) + "," + std::to_string(sm.target_reached) + ","
         + csv_num(p.acc1) + "," + csv_num(p.acc2) + "," + csv_num(p.acc3) + ","
         + csv_num(p.turns_per_pass) + "," + csv_num(p.activated) + "," + csv_num(p.recovery)
         + "," + csv_text(join(distinct(sm.runs, &run_result::commit), " ")) + ","
         + csv_text(join(distinct(sm.runs, &run_result::config_hash), " ")) + ","
         + csv_text(join(distinct(sm.runs, &run_result::task_suite), " ")) + "\n";
  }
  return o;
}

std::string render_runs_csv(const std::vector<run_result>& runs) {
  std::string o = "arm,seed,acc1,acc2,acc3,turns_per_pass,steps,train_minutes,activated,recovery,"
                  "compiles_turn1,compiles_later,minutes_to_target,commit,config_hash,task_suite\n";
  for (auto& r : runs)
    o += csv_text(r.arm) + "," + std::to_string(r.seed) + "," + csv_num(r.acc1) + ","
         + csv_num(r.acc2) + "," + csv_num(r.acc3) + "," + csv_num(r.turns_per_pass) + ","
         + std::to_string(r.steps) + "," + csv_num(r.train_minutes) + "," + csv_num(r.activated)
         + "," + csv_num(r.recovery) + "," + std::to_string(r.compiles_turn1) + ","
         + std::to_string(r.compiles_later) + "," + csv_num(r.minutes_to_target) + ","
         + csv_text(r.commit) + "," + csv_text(r.config_hash) + "," + csv_text(r.task_suite)
         + "\n";
  return o;
}

std::string render_html(const spec& s, const std::vector<arm_summary>& sums,
                        const std::vector<std::string>& meta, const std::vector<run_result>& runs,
                        const std::vector<std::string>& run_dirs) {
  std::string o = report::page_head("leap experiment",
                                    "li{color:#555;font-size:13px}th:first-child{text-align:left}"
                                    "td.p{color:#777;background:#fafafa}\n")
                  + "<ul>\n";
  for (auto& m : meta)
    o += "<li>" + escape_xml(m) + "</li>\n";
  o += "</ul>\n<p>Mean &plusmn; 95% Student t interval over seeds. Acc@k and turns per pass: "
       "eval split, final checkpoints; activated, recovery: training steps; compiles: requests "
       "per run; minutes to target: training Acc@1 (last-3 mean) &ge; "
       + format_fixed(100 * s.target_acc1, 0) + "%. Grey columns: the paper.</p>\n<table>\n"
       "<tr><th>arm</th><th>seeds</th><th>Acc@1 %</th><th>Acc@2 %</th><th>Acc@3 %</th>"
       "<th>turns / pass</th><th>activated %</th><th>recovery %</th><th>compiles<br>turn 1</th>"
       "<th>compiles<br>later</th><th>min to target<br>(reached)</th><th>paper<br>Acc@1/2/3</th>"
       "<th>paper<br>turns / pass</th><th>paper<br>activated %</th><th>paper<br>recovery %</th>"
       "</tr>\n";
  const auto& pal = report::palette();
  for (std::size_t i = 0; i < sums.size(); ++i) {
    auto& sm = sums[i];
    o += "<tr><td><span class=\"sw\" style=\"background:" + pal[i % pal.size()] + "\"></span>"
         + escape_xml(sm.a->label) + "</td><td>" + std::to_string(sm.runs.size()) + "/"
         + std::to_string(s.seeds.size()) + "</td>";
    for (auto& k : metric_keys()) {
      o += "<td>" + escape_xml(cell(sm.stat.at(k), k));
      if (k == "minutes_to_target")
        o += " (" + std::to_string(sm.target_reached) + "/" + std::to_string(sm.runs.size()) + ")";
      o += "</td>";
    }
    o += "<td class=\"p\">" + escape_xml(paper_acc(sm.a->paper)) + "</td><td class=\"p\">"
         + escape_xml(opt_text(sm.a->paper.turns_per_pass, 2)) + "</td><td class=\"p\">"
         + escape_xml(opt_text(sm.a->paper.activated, 1)) + "</td><td class=\"p\">"
         + escape_xml(opt_text(sm.a->paper.recovery, 1)) + "</td></tr>\n";
  }
  o += "</table>\n<p>" + escape_xml(paper_label) + "</p>\n";
  // Training curves of every run: colour = arm, dash = seed.
  std::vector<report::run_data> data;
  std::vector<int> colour, dash;
  for (std::size_t i = 0; i < runs.size() && i < run_dirs.size(); ++i) {
    auto d = report::load_run(run_dirs[i]);
    if (!d)
      continue;
    d->name = runs[i].arm + " s" + std::to_string(runs[i].seed);
    auto it = std::find_if(s.arms.begin(), s.arms.end(),
                           [&](const arm& a) { return a.name == runs[i].arm; });
    colour.push_back(static_cast<int>(it - s.arms.begin()));
    auto si = std::find(s.seeds.begin(), s.seeds.end(), runs[i].seed);
    dash.push_back(static_cast<int>((si - s.seeds.begin()) % 3));
    data.push_back(std::move(*d));
  }
  auto curve = [&](const std::string& title, const std::string& y_label, bool wall,
                   double (*f)(const report::step_row&, long long&), std::optional<double> y_max) {
    report::chart c;
    c.title = title;
    c.x_label = wall ? "wall-clock (minutes)" : "learner step";
    c.y_label = y_label;
    c.y_min = 0.0;
    c.y_max = y_max;
    for (std::size_t r = 0; r < data.size(); ++r) {
      report::series sr;
      sr.label = data[r].name;
      sr.color = colour[r];
      sr.dash = dash[r];
      long long acc = 0;
      for (std::size_t i = 0; i < data[r].steps.size(); ++i) {
        sr.x.push_back(wall ? data[r].wall_seconds[i] / 60.0 : double(data[r].steps[i].step));
        sr.y.push_back(f(data[r].steps[i], acc));
      }
      c.lines.push_back(std::move(sr));
    }
    return report::render_svg(c);
  };
  o += "<div class=\"charts\">\n";
  o += curve("Training Acc@1 by wall-clock", "pass rate", true,
             [](const report::step_row& r, long long&) { return r.acc_at_1; }, 1.0);
  o += curve("Training Acc@3 by wall-clock", "pass rate", true,
             [](const report::step_row& r, long long&) { return r.acc_at_3; }, 1.0);
  o += curve("Compile requests, cumulative", "requests", true,
             [](const report::step_row& r, long long& acc) {
               acc += r.compile_requests();
               return double(acc);
             },
             std::nullopt);
  o += curve("Activated groups (DCP)", "fraction of groups", false,
             [](const report::step_row& r, long long&) { return r.activated_groups; }, 1.0);
  o += "</div>\n</body>\n</html>\n";
  return o;
}

} // namespace leap::runtime::experiment
