// render_report and write_report: see html_report.hpp.
#include "runtime/report/html_report.hpp"

#include "runtime/report/seed_stats.hpp"
#include "runtime/report/svg_chart.hpp"

#include "common/fs.hpp"
#include "common/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

namespace leap::report {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

using metric = std::function<double(const step_row&)>;

struct line_spec {
  std::string name; // "Acc@1"; empty when the chart has one line per run
  metric value;
  int dash = 0;
};

// Runs grouped into arms: each arm is drawn as the mean of its runs with a 95% band. Without
// --by-arm every run is an arm of its own (its line is the run's, without a band).
struct grouping {
  std::vector<std::string> names; // the arms, in order of first appearance
  std::vector<int> of_run;        // the arm of each run
};

// The line of one arm: the mean of its runs' points (`point`, see arm_points) with a 95% band.
template <class Point>
series arm_series(const std::vector<run_data>& runs, const grouping& g, int arm,
                  const std::string& label, Point point) {
  return mean_series(label, arm, arm_points(runs, g.of_run, arm, point));
}

using point_t = std::optional<std::pair<double, double>>;

// One chart: for every arm of `g` (a run each, without --by-arm), one line per spec, x = step or
// wall-clock minutes.
std::string chart_of(const std::vector<run_data>& runs, const grouping& g, const std::string& title,
                     const std::string& y_label, const std::vector<line_spec>& specs,
                     bool by_wall_clock, std::optional<double> y_min, std::optional<double> y_max) {
  chart c;
  c.title = title;
  c.x_label = by_wall_clock ? "wall-clock (minutes)" : "learner step";
  c.y_label = y_label;
  c.y_min = y_min;
  c.y_max = y_max;
  for (std::size_t a = 0; a < g.names.size(); ++a)
    for (auto& spec : specs) {
      auto s = arm_series(runs, g, static_cast<int>(a),
                          g.names[a] + (spec.name.empty() ? "" : " " + spec.name),
                          [&](const run_data& r, std::size_t i) -> point_t {
                            return std::make_pair(by_wall_clock ? r.wall_seconds[i] / 60.0
                                                                : double(r.steps[i].step),
                                                  spec.value(r.steps[i]));
                          });
      s.dash = spec.dash;
      c.lines.push_back(std::move(s));
    }
  return render_svg(c);
}

// The held-out evaluations' Acc@1 and Acc@3 (train.eval_every): one point per evaluated step,
// x = step or the run's elapsed minutes (learner steps and evaluations) at the end of that step.
std::string heldout_chart(const std::vector<run_data>& runs, const grouping& g, bool by_wall_clock) {
  chart c;
  c.title = by_wall_clock ? "Held-out Acc@1 / Acc@3 by wall-clock" : "Held-out Acc@1 / Acc@3 by step";
  c.x_label = by_wall_clock ? "wall-clock incl. evaluations (minutes)" : "learner step";
  c.y_label = "pass rate";
  c.y_min = 0.0;
  c.y_max = 1.0;
  for (std::size_t a = 0; a < g.names.size(); ++a)
    for (int k : {1, 3}) {
      auto s = arm_series(runs, g, static_cast<int>(a),
                          g.names[a] + " held-out Acc@" + std::to_string(k),
                          [&](const run_data& r, std::size_t i) -> point_t {
                            const auto& h = r.steps[i].heldout;
                            if (!h)
                              return std::nullopt;
                            return std::make_pair(by_wall_clock ? r.elapsed_seconds[i] / 60.0
                                                                : double(r.steps[i].step),
                                                  k == 1 ? h->acc_at_1 : h->acc_at_3);
                          });
      s.dash = k == 1 ? 0 : 2;
      c.lines.push_back(std::move(s));
    }
  return render_svg(c);
}

std::string fixed(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v))
    return "&ndash;";
  return format_fixed(*v, decimals);
}

std::string summary_table(const std::vector<run_data>& runs) {
  std::string o = "<table>\n<tr><th>run</th><th>steps</th><th>wall-clock</th>"
                  "<th>Acc@1</th><th>Acc@2</th><th>Acc@3</th><th>best Acc@1</th>"
                  "<th>compile requests<br>turn 1 / later</th><th>real compiles</th>"
                  "<th>cache hits</th><th>activated</th><th>turns / pass</th><th>recovery</th>"
                  "<th>attempts / s</th><th>held-out Acc@1 / Acc@3<br>(last; compiles)</th>"
                  "<th>tasks</th><th>task suite</th></tr>\n";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto& run = runs[r];
    long long t1 = 0, later = 0, real = 0, hits = 0, attempts = 0;
    double best = nan, rec_sum = 0;
    int rec_n = 0;
    for (auto& s : run.steps) {
      t1 += s.compile_requests_turn1();
      later += s.compiles_later_turns;
      real += s.compiles;
      hits += s.cache_hits;
      attempts += s.attempts;
      best = std::isnan(best) ? s.acc_at_1 : std::max(best, s.acc_at_1);
      if (s.recovery) {
        rec_sum += *s.recovery;
        ++rec_n;
      }
    }
    const double wall = run.wall_seconds.empty() ? 0 : run.wall_seconds.back();
    auto last3 = [&](auto f) { return tail_mean(run, 3, f); };
    auto all = [&](auto f) { return tail_mean(run, run.steps.size(), f); };
    o += "<tr><td><span class=\"sw\" style=\"background:" +
         palette()[r % palette().size()] + "\"></span>" + escape_xml(run.name) + "</td>";
    o += "<td>" + std::to_string(run.steps.size()) + "</td>";
    o += "<td>" + fixed(wall / 60.0, 1) + " min</td>";
    o += "<td>" + fixed(last3([](const step_row& s) { return s.acc_at_1; }), 3) + "</td>";
    o += "<td>" + fixed(last3([](const step_row& s) { return s.acc_at_2; }), 3) + "</td>";
    o += "<td>" + fixed(last3([](const step_row& s) { return s.acc_at_3; }), 3) + "</td>";
    o += "<td>" + fixed(best, 3) + "</td>";
    o += "<td>" + std::to_string(t1) + " / " + std::to_string(later) + "</td>";
    o += "<td>" + std::to_string(real) + "</td><td>" + std::to_string(hits) + "</td>";
    o += "<td>" + fixed(all([](const step_row& s) { return s.activated_groups; }), 2) + "</td>";
    o += "<td>" + fixed(all([](const step_row& s) { return s.turns_per_pass; }), 2) + "</td>";
    o += "<td>" + fixed(rec_n ? std::optional<double>(rec_sum / rec_n) : std::nullopt, 2) + "</td>";
    o += "<td>" + fixed(wall > 0 ? std::optional<double>(attempts / wall) : std::nullopt, 2) + "</td>";
    const heldout_row* last_heldout = nullptr;
    long long heldout_compiles = 0;
    for (auto& s : run.steps)
      if (s.heldout) {
        last_heldout = &*s.heldout;
        heldout_compiles += s.heldout->compile_requests();
      }
    o += "<td>" + (last_heldout ? fixed(last_heldout->acc_at_1, 3) + " / " +
                                    fixed(last_heldout->acc_at_3, 3) + " (" +
                                    std::to_string(heldout_compiles) + ")"
                                : std::string("&ndash;")) + "</td>";
    o += "<td>" + (run.tasks.empty() ? std::string("&ndash;") : std::to_string(run.tasks.size())) +
         "</td>";
    o += "<td><code>" + (run.task_suite.empty() ? std::string("&ndash;") : escape_xml(run.task_suite)) +
         "</code></td></tr>\n";
  }
  return o + "</table>\n";
}

} // namespace

std::string page_head(const std::string& title, const std::string& extra_css) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
         + escape_xml(title) + "</title>\n<style>\n"
         "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222}\n"
         "h1{font-size:20px;margin:0 0 4px}p{margin:4px 0 12px;color:#555;font-size:13px}\n"
         "table{border-collapse:collapse;font-size:13px;margin:8px 0 20px}\n"
         "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f3f3f3}\n"
         "td:first-child{text-align:left}\n"
         ".sw{display:inline-block;width:10px;height:10px;margin-right:6px;vertical-align:middle}\n"
         ".charts{display:flex;flex-wrap:wrap;gap:8px}\n"
         ".charts svg{border:1px solid #e4e4e4;background:#fff}\n"
         "svg .t{font-size:13px;font-weight:600;fill:#222}svg .k{font-size:11px;fill:#444}\n"
         "svg .n{font-size:12px;fill:#888}svg .g{stroke:#eee;stroke-width:1}\n"
         "svg .a{stroke:#888;stroke-width:1}svg .f{fill:none;stroke:#999;stroke-width:1}\n"
         + extra_css + "</style>\n</head>\n<body>\n<h1>" + escape_xml(title) + "</h1>\n";
}

namespace {

std::string render_page(const std::vector<run_data>& runs, const grouping& g, bool by_arm) {
  auto acc = [] {
    return std::vector<line_spec>{
      {"Acc@1", [](const step_row& s) { return s.acc_at_1; }, 0},
      {"Acc@2", [](const step_row& s) { return s.acc_at_2; }, 1},
      {"Acc@3", [](const step_row& s) { return s.acc_at_3; }, 2}};
  };
  auto one = [](metric m) { return std::vector<line_spec>{{"", std::move(m), 0}}; };
  std::vector<std::string> charts = {
    chart_of(runs, g, "Acc@1 / Acc@2 / Acc@3 by step", "pass rate", acc(), false, 0.0, 1.0),
    chart_of(runs, g, "Acc@k by wall-clock", "pass rate", acc(), true, 0.0, 1.0),
    chart_of(runs, g, "Compile requests per step", "requests",
             {{"turn 1", [](const step_row& s) { return double(s.compile_requests_turn1()); }, 0},
              {"later turns", [](const step_row& s) { return double(s.compiles_later_turns); }, 1}},
             false, 0.0, std::nullopt),
    chart_of(runs, g, "Build cache per step", "builds",
             {{"hits", [](const step_row& s) { return double(s.cache_hits); }, 0},
              {"real compiles", [](const step_row& s) { return double(s.compiles); }, 1}},
             false, 0.0, std::nullopt),
    chart_of(runs, g, "Activated groups (DCP)", "fraction of groups",
             one([](const step_row& s) { return s.activated_groups; }), false, 0.0, 1.0),
    chart_of(runs, g, "Turns per pass", "turns",
             one([](const step_row& s) { return s.turns_per_pass; }), false, 1.0, std::nullopt),
    chart_of(runs, g, "Recovery (turn-1 failures fixed later)", "fraction",
             one([](const step_row& s) { return s.recovery ? *s.recovery : nan; }), false, 0.0, 1.0),
    chart_of(runs, g, "Loss", "loss", one([](const step_row& s) { return s.loss; }), false,
             std::nullopt, std::nullopt),
    chart_of(runs, g, "KL to the reference", "KL", one([](const step_row& s) { return s.kl; }), false,
             0.0, std::nullopt),
    chart_of(runs, g, "Clip fraction", "fraction",
             one([](const step_row& s) { return s.clip_fraction; }), false, 0.0, std::nullopt),
    chart_of(runs, g, "Gradient norm", "norm", one([](const step_row& s) { return s.grad_norm; }),
             false, 0.0, std::nullopt),
    chart_of(runs, g, "Infrastructure per step", "count",
             {{"attempts lost", [](const step_row& s) { return double(s.dropped); }, 0},
              {"jobs retried", [](const step_row& s) { return double(s.jobs_retried); }, 1},
              {"nodes lost", [](const step_row& s) { return double(s.nodes_lost); }, 2},
              {"nodes rejoined", [](const step_row& s) { return double(s.nodes_rejoined); }, 3},
              {"jobs rerun", [](const step_row& s) { return double(s.jobs_rerun); }, 4}},
             false, 0.0, std::nullopt),
    chart_of(runs, g, "Stage utilisation", "busy fraction",
             {{"generate", [](const step_row& s) { return s.util_generate; }, 0},
              {"compile", [](const step_row& s) { return s.util_compile; }, 1},
              {"execute", [](const step_row& s) { return s.util_execute; }, 2}},
             false, 0.0, 1.0),
  };
  const bool any_heldout = std::any_of(runs.begin(), runs.end(), [](const run_data& r) {
    return std::any_of(r.steps.begin(), r.steps.end(),
                       [](const step_row& s) { return s.heldout.has_value(); });
  });
  if (any_heldout) {
    charts.insert(charts.begin() + 2, heldout_chart(runs, g, true));
    charts.insert(charts.begin() + 2, heldout_chart(runs, g, false));
  }
  std::string o = page_head(by_arm ? "leap report, by arm" : "leap report") + "<p>";
  for (std::size_t r = 0; r < runs.size(); ++r)
    o += (r ? ", " : "") + std::string("<code>") + escape_xml(runs[r].dir) + "</code>"
         + (by_arm ? " (" + escape_xml(g.names[static_cast<std::size_t>(g.of_run[r])]) + ")" : "");
  if (by_arm)
    o += ". Each arm (the runs' parent directory) is drawn as the mean of its runs, step by step, "
         "with its 95% Student t interval shaded (where two or more runs have the step)";
  o += ". Acc@k: the fraction of a step's ranked attempts solved within k turns (the training "
       "groups themselves; per-step noise is large on small batches). Summary: Acc@k is the "
       "mean of the last 3 steps; activated, turns / pass and recovery are means over steps. "
       "Held-out: the evaluations of train.eval_every on a fixed sample of held-out tasks, their "
       "compile requests counted apart from training's.</p>\n";
  for (auto& r : runs)
    if (!r.warning.empty())
      o += "<p>warning: " + escape_xml(r.warning) + "</p>\n";
  o += summary_table(runs);
  o += "<div class=\"charts\">\n";
  for (auto& c : charts)
    o += c;
  o += "</div>\n</body>\n</html>\n";
  return o;
}

} // namespace

std::string render_report(const std::vector<run_data>& runs) {
  grouping each_run;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    each_run.names.push_back(runs[r].name);
    each_run.of_run.push_back(static_cast<int>(r));
  }
  return render_page(runs, each_run, false);
}

std::string arm_of(const std::string& run_dir) {
  auto p = std::filesystem::path(run_dir).lexically_normal();
  if (!p.has_filename()) // a trailing slash
    p = p.parent_path();
  auto parent = p.parent_path().filename().string();
  return parent.empty() || parent == "." || parent == ".." ? p.string() : parent;
}

std::string render_report_by_arm(const std::vector<run_data>& runs) {
  grouping g;
  for (auto& r : runs) {
    const auto arm = arm_of(r.dir);
    auto it = std::find(g.names.begin(), g.names.end(), arm);
    g.of_run.push_back(static_cast<int>(it - g.names.begin()));
    if (it == g.names.end())
      g.names.push_back(arm);
  }
  return render_page(runs, g, true);
}

result<void> write_report(const std::vector<std::string>& run_dirs, const std::string& out_path,
                          bool by_arm) {
  if (run_dirs.empty())
    return make_error("report: no run directory given");
  std::vector<run_data> runs;
  for (auto& d : run_dirs) {
    auto r = load_run(d);
    if (!r)
      return r.err();
    runs.push_back(std::move(*r));
  }
  if (auto w = write_file_atomic(out_path, by_arm ? render_report_by_arm(runs) : render_report(runs)); !w)
    return make_error("report: " + w.message());
  return {};
}

} // namespace leap::report
