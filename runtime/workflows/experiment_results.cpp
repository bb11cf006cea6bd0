// The statistics over an experiment's runs (mean and a 95% Student t interval per arm) and its
// result files (table.md, results.csv, runs.csv, report.html): see experiment_data.hpp.
#include "runtime/workflows/experiment_data.hpp"

#include "common/strings.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/report/run_data.hpp"
#include "runtime/report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>

namespace leap::runtime::experiment {

const std::vector<std::string>& metric_keys() {
  static const std::vector<std::string> k = {
    "acc1",           "acc2",           "acc3",           "bundled_acc1",      "bundled_acc3",
    "bundled_change1", "bundled_change3", "comp_acc1",      "comp_acc3",         "comp_change1",
    "comp_change3",   "turns_per_pass", "activated",      "recovery",          "compiles_turn1",
    "compiles_later", "minutes_to_target", "heldout_acc1", "heldout_acc3",     "heldout_compiles"};
  return k;
}

namespace {

std::optional<double> minus(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b)
    return std::nullopt;
  return *a - *b;
}

// A run's figure for metric k; the change keys need the warm start's evaluation.
std::optional<double> metric_of(const run_result& r, const std::string& k, const run_result* warm) {
  if (k == "acc1") return r.acc1;
  if (k == "acc2") return r.acc2;
  if (k == "acc3") return r.acc3;
  if (k == "bundled_acc1") return r.bundled_acc1;
  if (k == "bundled_acc3") return r.bundled_acc3;
  if (k == "comp_acc1") return r.comp_acc1;
  if (k == "comp_acc3") return r.comp_acc3;
  if (k == "bundled_change1") return warm ? minus(r.bundled_acc1, warm->bundled_acc1) : std::nullopt;
  if (k == "bundled_change3") return warm ? minus(r.bundled_acc3, warm->bundled_acc3) : std::nullopt;
  if (k == "comp_change1") return warm ? minus(r.comp_acc1, warm->comp_acc1) : std::nullopt;
  if (k == "comp_change3") return warm ? minus(r.comp_acc3, warm->comp_acc3) : std::nullopt;
  if (k == "turns_per_pass") return r.turns_per_pass > 0 ? std::optional<double>(r.turns_per_pass) : std::nullopt;
  if (k == "activated") return r.activated;
  if (k == "recovery") return r.recovery;
  if (k == "compiles_turn1") return static_cast<double>(r.compiles_turn1);
  if (k == "compiles_later") return static_cast<double>(r.compiles_later);
  if (k == "minutes_to_target") return r.minutes_to_target;
  if (k == "heldout_acc1") return r.heldout_acc1;
  if (k == "heldout_acc3") return r.heldout_acc3;
  if (k == "heldout_compiles") return r.heldout_compiles;
  return std::nullopt;
}

bool is_change(const std::string& k) { return k.find("change") != std::string::npos; }

bool is_rate(const std::string& k) {
  return k.find("acc") != std::string::npos || is_change(k) || k == "activated" || k == "recovery";
}

// Our figure for a metric as text: rates in percent, counts as integers, minutes with 1 decimal.
std::string cell(const std::optional<interval>& iv, const std::string& k) {
  if (!iv)
    return "–";
  const bool rate = is_rate(k);
  const double scale = rate ? 100 : 1;
  const int dec = rate ? 1 : (k == "turns_per_pass" ? 2 : (k == "minutes_to_target" ? 1 : 0));
  std::string s = format_fixed(iv->mean * scale, dec);
  if (s.find_first_not_of("-0.") == std::string::npos) // -0.0: a tiny negative mean, shown as 0
    s = format_fixed(0.0, dec);
  if (is_change(k) && s[0] != '-')
    s = "+" + s;
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

std::vector<arm_summary> summarise(const spec& s, const std::vector<run_result>& runs,
                                   const run_result* warm) {
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
        if (auto v = metric_of(*r, k, warm))
          xs.push_back(*v);
      sum.stat[k] = mean_interval(xs);
      if (k == "minutes_to_target")
        sum.target_reached = static_cast<int>(xs.size());
    }
    out.push_back(std::move(sum));
  }
  return out;
}

namespace {

// One column of a result table: its head, and its text for an arm (or for the warm start's row,
// when `sm` is null and `warm` is its evaluation). Paper columns are shaded in report.html.
struct column {
  std::string head;
  std::function<std::string(const arm_summary* sm, const run_result* warm)> text;
  bool paper = false;
};

column metric_column(const std::string& head, const std::string& k) {
  return {head, [k](const arm_summary* sm, const run_result* warm) {
            if (sm)
              return cell(sm->stat.at(k), k);
            if (!warm || is_change(k))
              return std::string("–");
            auto v = metric_of(*warm, k, nullptr);
            return v ? cell(interval{1, *v, std::nullopt}, k) : std::string("–");
          }};
}

column seeds_column(const spec& s) {
  return {"seeds", [&s](const arm_summary* sm, const run_result*) {
            return sm ? std::to_string(sm->runs.size()) + "/" + std::to_string(s.seeds.size())
                      : std::string("–");
          }};
}

// Columns of metric keys, as (head, key) pairs.
std::vector<column> metric_columns(std::initializer_list<std::pair<const char*, const char*>> heads) {
  std::vector<column> out;
  for (auto [head, key] : heads)
    out.push_back(metric_column(head, key));
  return out;
}

// A column of the paper's figures for an arm ("–" on the warm start's row).
column paper_column(const std::string& head, std::string (*text)(const paper_numbers&)) {
  return {head, [text](const arm_summary* sm, const run_result*) { return sm ? text(sm->a->paper) : "–"; },
          true};
}

template <class... Parts>
std::vector<column> concat(std::vector<column> first, Parts&&... rest) {
  (first.insert(first.end(), rest.begin(), rest.end()), ...);
  return first;
}

// Held-out tasks: the final checkpoints' evaluation, per set and in all, beside the warm start's.
std::vector<column> heldout_columns(const spec& s) {
  return concat(
    {seeds_column(s)},
    metric_columns({{"eval split Acc@1", "bundled_acc1"}, {"eval split Acc@3", "bundled_acc3"},
                    {"change Acc@1", "bundled_change1"}, {"change Acc@3", "bundled_change3"},
                    {"compositions Acc@1", "comp_acc1"}, {"compositions Acc@3", "comp_acc3"},
                    {"change Acc@1", "comp_change1"}, {"change Acc@3", "comp_change3"},
                    {"all Acc@1", "acc1"}, {"all Acc@2", "acc2"}, {"all Acc@3", "acc3"},
                    {"turns / pass", "turns_per_pass"}}),
    std::vector<column>{
      paper_column("paper Acc@1/2/3", [](const paper_numbers& p) { return paper_acc(p); }),
      paper_column("paper turns / pass",
                   [](const paper_numbers& p) { return opt_text(p.turns_per_pass, 2); })});
}

// Training on the same budget: DCP's activity, compiles, time to target, held-out during it.
std::vector<column> training_columns(const spec& s) {
  column to_target{"min to target (reached)", [](const arm_summary* sm, const run_result*) {
                     if (!sm)
                       return std::string("–");
                     return cell(sm->stat.at("minutes_to_target"), "minutes_to_target") + " ("
                            + std::to_string(sm->target_reached) + "/"
                            + std::to_string(sm->runs.size()) + ")";
                   }};
  return concat(
    {seeds_column(s)},
    metric_columns({{"activated %", "activated"}, {"recovery %", "recovery"},
                    {"compiles turn 1", "compiles_turn1"}, {"compiles later", "compiles_later"}}),
    std::vector<column>{to_target},
    metric_columns({{"held-out Acc@1", "heldout_acc1"}, {"held-out Acc@3", "heldout_acc3"},
                    {"held-out compiles", "heldout_compiles"}}),
    std::vector<column>{
      paper_column("paper activated %", [](const paper_numbers& p) { return opt_text(p.activated, 1); }),
      paper_column("paper recovery %", [](const paper_numbers& p) { return opt_text(p.recovery, 1); })});
}

const char* warm_label = "warm start (no RL)";

std::string md_table(const std::vector<column>& cols, const std::vector<arm_summary>& sums,
                     const run_result* warm) {
  std::string o = "| arm |";
  std::string rule = "|---|";
  for (auto& c : cols) {
    o += " " + c.head + " |";
    rule += "---|";
  }
  o += "\n" + rule + "\n";
  if (warm) {
    o += std::string("| ") + warm_label + " |";
    for (auto& c : cols)
      o += " " + c.text(nullptr, warm) + " |";
    o += "\n";
  }
  for (auto& sm : sums) {
    o += "| " + sm.a->label + " |";
    for (auto& c : cols)
      o += " " + c.text(&sm, warm) + " |";
    o += "\n";
  }
  return o;
}

} // namespace

namespace {

// The result tables, as both table.md and report.html show them.
struct section {
  std::string title, note;
  std::vector<column> cols;
  bool warm_row = false; // a row for the warm start's own evaluation
};

std::vector<section> sections(const spec& s) {
  return {
    {"Held-out tasks, final checkpoints",
     "Mean ± 95% Student t interval over seeds (no interval with one seed), in %: leap eval of "
     "each run's final checkpoint (eval.tasks, fixed eval seed), on the hand-written eval-split "
     "tasks, on the generated held-out compositions, and on all of them. Change: each run's "
     "figure minus the warm start's (its row; the same evaluation, so every task's samples come "
     "from the same random streams); an interval over the seeds that excludes 0 is a change the "
     "seeds support. Paper: its figures for the arm.",
     heldout_columns(s), true},
    {"Training, on the same compile budget",
     "Activated groups and recovery: mean over the run's training steps, in %. Compile requests "
     "(build-cache hits included) of turn 1 and of later turns, per run. Minutes to target: "
     "learner-step wall-clock until the training Acc@1 (mean of the last 3 steps) first reached "
       + format_fixed(100 * s.target_acc1, 0)
       + "%, over the seeds that reached it. Held-out: the last held-out evaluation during "
         "training (train.eval_every) of each run, Acc@1 and Acc@3 in %, and the compile "
         "requests of all of them (apart from training's), over the runs that had one.",
     training_columns(s), false}};
}

} // namespace

std::string render_table_md(const spec& s, const std::vector<arm_summary>& sums,
                            const std::vector<std::string>& meta, const run_result* warm) {
  std::string o = "# leap experiment\n\n";
  for (auto& m : meta)
    o += "- " + m + "\n";
  for (auto& sec : sections(s))
    o += "\n## " + sec.title + "\n\n" + sec.note + "\n\n"
         + md_table(sec.cols, sums, sec.warm_row ? warm : nullptr);
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
  std::string o = "arm,seed,acc1,acc2,acc3,bundled_acc1,bundled_acc3,comp_acc1,comp_acc3,"
                  "turns_per_pass,steps,train_minutes,activated,recovery,"
                  "compiles_turn1,compiles_later,minutes_to_target,heldout_acc1,heldout_acc3,"
                  "heldout_compiles,commit,config_hash,task_suite\n";
  for (auto& r : runs)
    o += csv_text(r.arm) + "," + std::to_string(r.seed) + "," + csv_num(r.acc1) + ","
         + csv_num(r.acc2) + "," + csv_num(r.acc3) + "," + csv_num(r.bundled_acc1) + ","
         + csv_num(r.bundled_acc3) + "," + csv_num(r.comp_acc1) + "," + csv_num(r.comp_acc3) + ","
         + csv_num(r.turns_per_pass) + ","
         + std::to_string(r.steps) + "," + csv_num(r.train_minutes) + "," + csv_num(r.activated)
         + "," + csv_num(r.recovery) + "," + std::to_string(r.compiles_turn1) + ","
         + std::to_string(r.compiles_later) + "," + csv_num(r.minutes_to_target) + ","
         + csv_num(r.heldout_acc1) + "," + csv_num(r.heldout_acc3) + ","
         + csv_num(r.heldout_compiles) + ","
         + csv_text(r.commit) + "," + csv_text(r.config_hash) + "," + csv_text(r.task_suite)
         + "\n";
  return o;
}

namespace {

std::string html_table(const std::vector<column>& cols, const std::vector<arm_summary>& sums,
                       const run_result* warm) {
  const auto& pal = report::palette();
  std::string o = "<table>\n<tr><th>arm</th>";
  for (auto& c : cols)
    o += "<th>" + escape_xml(c.head) + "</th>";
  o += "</tr>\n";
  auto row = [&](const std::string& label, const std::string& swatch, const arm_summary* sm) {
    o += "<tr><td>" + swatch + escape_xml(label) + "</td>";
    for (auto& c : cols)
      o += std::string(c.paper ? "<td class=\"p\">" : "<td>") + escape_xml(c.text(sm, warm)) + "</td>";
    o += "</tr>\n";
  };
  if (warm)
    row(warm_label, "", nullptr);
  for (std::size_t i = 0; i < sums.size(); ++i)
    row(sums[i].a->label,
        "<span class=\"sw\" style=\"background:" + pal[i % pal.size()] + "\"></span>", &sums[i]);
  return o + "</table>\n";
}

} // namespace

std::string render_html(const spec& s, const std::vector<arm_summary>& sums,
                        const std::vector<std::string>& meta, const std::vector<run_result>& runs,
                        const std::vector<std::string>& run_dirs, const run_result* warm) {
  std::string o = report::page_head("leap experiment",
                                    "li{color:#555;font-size:13px}th:first-child{text-align:left}"
                                    "td.p{color:#777;background:#fafafa}\n")
                  + "<ul>\n";
  for (auto& m : meta)
    o += "<li>" + escape_xml(m) + "</li>\n";
  o += "</ul>\n";
  for (auto& sec : sections(s))
    o += "<h2>" + escape_xml(sec.title) + "</h2>\n<p>" + escape_xml(sec.note) + "</p>\n"
         + html_table(sec.cols, sums, sec.warm_row ? warm : nullptr);
  o += "<p>" + escape_xml(paper_label) + "</p>\n";
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
                   double (*f)(const report::run_data&, std::size_t), std::optional<double> y_max) {
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
      for (std::size_t i = 0; i < data[r].steps.size(); ++i) {
        sr.x.push_back(wall ? data[r].wall_seconds[i] / 60.0 : double(data[r].steps[i].step));
        sr.y.push_back(f(data[r], i));
      }
      c.lines.push_back(std::move(sr));
    }
    return report::render_svg(c);
  };
  // Per arm, mean over its seeds with a 95% band: a chart of Acc (0..1) with a line for each arm
  // whose seeds have points (`seeds_of(a)`: one list per seed).
  using points = std::vector<std::pair<double, double>>;
  auto arm_chart = [&](const std::string& title, const std::string& x_label,
                       const std::string& y_label, auto seeds_of) {
    report::chart c;
    c.title = title;
    c.x_label = x_label;
    c.y_label = y_label;
    c.y_min = 0.0;
    c.y_max = 1.0;
    for (std::size_t a = 0; a < s.arms.size(); ++a)
      if (std::vector<points> seeds = seeds_of(a); !seeds.empty())
        c.lines.push_back(report::mean_series(s.arms[a].label, static_cast<int>(a), seeds));
    return c;
  };
  // Training curves per arm: the points `point` gives per step, with the training compile
  // requests spent by then (does an arm reach the same held-out Acc@3 with fewer compiles?).
  auto by_arm = [&](const std::string& title, const std::string& x_label, const std::string& y_label,
                    auto point) {
    return report::render_svg(arm_chart(title, x_label, y_label, [&](std::size_t a) {
      return report::arm_points(data, colour, static_cast<int>(a),
                                [&](const report::run_data& d, std::size_t i) {
                                  return point(d.steps[i], d.compile_requests_spent[i]);
                                });
    }));
  };
  // The final evaluation against the compile requests training spent: from the warm start (0
  // compiles, its own evaluation) to each arm's final checkpoint.
  auto final_chart = [&](const std::string& title, std::optional<double> run_result::*field) {
    auto c = arm_chart(title, "compile requests spent in training", "Acc@3", [&](std::size_t a) {
      std::vector<points> seeds;
      for (auto& r : runs) {
        if (r.arm != s.arms[a].name || !(r.*field))
          continue;
        points pts;
        if (warm && warm->*field)
          pts.emplace_back(0.0, *(warm->*field));
        pts.emplace_back(double(r.compiles_turn1 + r.compiles_later), *(r.*field));
        seeds.push_back(std::move(pts));
      }
      return seeds;
    });
    return c.lines.empty() ? std::string() : report::render_svg(c); // no run has the set
  };
  using point_t = std::optional<std::pair<double, double>>;
  o += "<h2>Per arm: mean over seeds, shaded 95% interval</h2>\n<div class=\"charts\">\n";
  o += final_chart("Eval-split Acc@3, warm start to final checkpoint", &run_result::bundled_acc3);
  o += final_chart("Compositions Acc@3, warm start to final checkpoint", &run_result::comp_acc3);
  const bool any_heldout = std::any_of(data.begin(), data.end(), [](const report::run_data& d) {
    return std::any_of(d.steps.begin(), d.steps.end(),
                       [](const report::step_row& st) { return st.heldout.has_value(); });
  });
  if (any_heldout)
    for (int k : {3, 1})
      o += by_arm("Held-out sample Acc@" + std::to_string(k)
                    + " against training compiles (train.eval_every)",
                  "compile requests spent in training", "held-out Acc@" + std::to_string(k),
                  [k](const report::step_row& st, long long spent) -> point_t {
                    if (!st.heldout)
                      return std::nullopt;
                    return std::make_pair(double(spent), k == 1 ? st.heldout->acc_at_1
                                                                : st.heldout->acc_at_3);
                  });
  o += by_arm("Training Acc@1 by step", "learner step", "pass rate",
              [](const report::step_row& st, long long) -> point_t {
                return std::make_pair(double(st.step), st.acc_at_1);
              });
  o += "</div>\n<h2>Every run (colour: arm, dash: seed)</h2>\n";
  o += "<div class=\"charts\">\n";
  o += curve("Training Acc@1 by wall-clock", "pass rate", true,
             [](const report::run_data& d, std::size_t i) { return d.steps[i].acc_at_1; }, 1.0);
  o += curve("Training Acc@3 by wall-clock", "pass rate", true,
             [](const report::run_data& d, std::size_t i) { return d.steps[i].acc_at_3; }, 1.0);
  o += curve("Compile requests, cumulative", "requests", true,
             [](const report::run_data& d, std::size_t i) {
               return double(d.compile_requests_spent[i]);
             },
             std::nullopt);
  o += curve("Activated groups (DCP)", "fraction of groups", false,
             [](const report::run_data& d, std::size_t i) { return d.steps[i].activated_groups; },
             1.0);
  o += "</div>\n</body>\n</html>\n";
  return o;
}

} // namespace leap::runtime::experiment
