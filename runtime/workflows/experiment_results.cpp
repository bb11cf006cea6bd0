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
#include <limits>

namespace leap::runtime::experiment {

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
                                             "minutes_to_target", "heldout_acc1",
                                             "heldout_acc3", "heldout_compiles"};
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
  if (k == "heldout_acc1") return r.heldout_acc1;
  if (k == "heldout_acc3") return r.heldout_acc3;
  if (k == "heldout_compiles") return r.heldout_compiles;
  return std::nullopt;
}

// Our figure for a metric as text: rates in percent, counts as integers, minutes with 1 decimal.
std::string cell(const std::optional<interval>& iv, const std::string& k) {
  if (!iv)
    return "–";
  const bool rate = k == "acc1" || k == "acc2" || k == "acc3" || k == "activated" ||
                    k == "recovery" || k == "heldout_acc1" || k == "heldout_acc3";
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
       "reached it. Held-out: the last held-out evaluation during training (train.eval_every) "
       "of each run, Acc@1 and Acc@3 in %, and the compile requests of all of them (apart from "
       "training's), over the runs that had one.\n\n";
  o += "| arm | seeds | Acc@1 | Acc@2 | Acc@3 | turns / pass | activated % | recovery % | "
       "compiles turn 1 | compiles later | min to target (reached) | held-out Acc@1 | "
       "held-out Acc@3 | held-out compiles | paper Acc@1/2/3 | "
       "paper turns / pass | paper activated % | paper recovery % |\n";
  o += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
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
                  "compiles_turn1,compiles_later,minutes_to_target,heldout_acc1,heldout_acc3,"
                  "heldout_compiles,commit,config_hash,task_suite\n";
  for (auto& r : runs)
    o += csv_text(r.arm) + "," + std::to_string(r.seed) + "," + csv_num(r.acc1) + ","
         + csv_num(r.acc2) + "," + csv_num(r.acc3) + "," + csv_num(r.turns_per_pass) + ","
         + std::to_string(r.steps) + "," + csv_num(r.train_minutes) + "," + csv_num(r.activated)
         + "," + csv_num(r.recovery) + "," + std::to_string(r.compiles_turn1) + ","
         + std::to_string(r.compiles_later) + "," + csv_num(r.minutes_to_target) + ","
         + csv_num(r.heldout_acc1) + "," + csv_num(r.heldout_acc3) + ","
         + csv_num(r.heldout_compiles) + ","
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
       "<th>compiles<br>later</th><th>min to target<br>(reached)</th><th>held-out<br>Acc@1 %</th>"
       "<th>held-out<br>Acc@3 %</th><th>held-out<br>compiles</th><th>paper<br>Acc@1/2/3</th>"
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
