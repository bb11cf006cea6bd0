#include "bench/pipeline/timeline_svg.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace leap::bench {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

struct bar {
  double a, b;
  std::uint64_t id;
};

const char* colour_of(const std::string& stage) {
  if (stage == "generate") return "#4e79a7";
  if (stage == "compile") return "#f28e2b";
  if (stage == "execute") return "#59a14f";
  return "#b07aa1";
}

} // namespace

bool step_window(const mode_run& run, int k, double& t0, double& t1, int& step) {
  const int n = static_cast<int>(run.steps.size());
  if (n == 0)
    return false;
  step = k <= 0 ? (n + 1) / 2 : std::min(k, n);
  t0 = step >= 2 ? run.steps[static_cast<std::size_t>(step - 2)].t : 0.0;
  t1 = run.steps[static_cast<std::size_t>(step - 1)].t;
  return true;
}

std::string render_timeline_svg(const mode_run& run, double t0, double t1, const std::string& title) {
  struct lane {
    std::string label, stage;
    std::vector<bar> bars;
  };
  std::vector<lane> lanes;
  double busy_sum = 0;
  std::map<std::string, std::pair<double, int>> busy_by_stage; // busy seconds in window, workers
  for (const auto& p : run.pools) {
    std::vector<lane> ls(p.workers);
    for (std::uint32_t w = 0; w < p.workers; ++w) {
      ls[w].label = p.stage + " " + std::to_string(w);
      ls[w].stage = p.stage;
    }
    std::map<std::pair<std::uint64_t, std::uint32_t>, double> open;
    auto close = [&](std::uint64_t id, std::uint32_t slot, double a, double b) {
      double x0 = std::max(a, t0), x1 = std::min(b, t1);
      if (x1 > x0 && slot < ls.size()) {
        ls[slot].bars.push_back({x0, x1, id});
        busy_by_stage[p.stage].first += x1 - x0;
        busy_sum += x1 - x0;
      }
    };
    for (const auto& e : p.events) {
      if (e.what == job_event::kind::started)
        open[{e.id, e.slot}] = e.t;
      else if (e.what == job_event::kind::finished) {
        auto it = open.find({e.id, e.slot});
        if (it != open.end()) {
          close(e.id, e.slot, it->second, e.t);
          open.erase(it);
        }
      }
    }
    for (auto& [key, a] : open)
      close(key.first, key.second, a, t1);
    busy_by_stage[p.stage].second = static_cast<int>(p.workers);
    for (auto& l : ls)
      lanes.push_back(std::move(l));
  }
  lane learner{"learner", "learner", {}};
  for (auto& [a, b] : run.learner) {
    double x0 = std::max(a, t0), x1 = std::min(b, t1);
    if (x1 > x0)
      learner.bars.push_back({x0, x1, 0});
  }
  lanes.push_back(std::move(learner));

  const double left = 110, right = 20, top = 48, lane_h = 18, gap = 4, width = 1000;
  const double plot_w = width - left - right;
  const double span = std::max(t1 - t0, 1e-9);
  const double height = top + lanes.size() * (lane_h + gap) + 40;
  auto x_of = [&](double t) { return left + (t - t0) / span * plot_w; };
  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", width) + "\" height=\""
       + fmt("%.0f", height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + fmt("%.0f", left) + "\" y=\"18\" font-size=\"14\">" + escape_xml(title) + "</text>\n";
  std::string util;
  for (auto& [stage, bw] : busy_by_stage)
    util += stage + " " + fmt("%.0f", 100.0 * bw.first / (span * std::max(1, bw.second))) + "%  ";
  s += "<text x=\"" + fmt("%.0f", left) + "\" y=\"34\" fill=\"#555\">busy in this window: "
       + escape_xml(util) + "(scenario seconds " + fmt("%.1f", t0) + " - " + fmt("%.1f", t1) + ")</text>\n";
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    double y = top + i * (lane_h + gap);
    s += "<text x=\"" + fmt("%.0f", left - 6) + "\" y=\"" + fmt("%.1f", y + lane_h - 5)
         + "\" text-anchor=\"end\">" + escape_xml(lanes[i].label) + "</text>\n";
    s += "<rect x=\"" + fmt("%.1f", left) + "\" y=\"" + fmt("%.1f", y) + "\" width=\""
         + fmt("%.1f", plot_w) + "\" height=\"" + fmt("%.0f", lane_h) + "\" fill=\"#f3f3f3\"/>\n";
    for (auto& b : lanes[i].bars) {
      s += "<rect x=\"" + fmt("%.2f", x_of(b.a)) + "\" y=\"" + fmt("%.1f", y) + "\" width=\""
           + fmt("%.2f", std::max(0.5, x_of(b.b) - x_of(b.a))) + "\" height=\""
           + fmt("%.0f", lane_h) + "\" fill=\"" + colour_of(lanes[i].stage) + "\"><title>"
           + escape_xml(lanes[i].label) + (b.id ? " job " + std::to_string(b.id) : std::string())
           + ": " + fmt("%.2f", b.a) + "-" + fmt("%.2f", b.b) + " s</title></rect>\n";
    }
  }
  // Time axis: about 10 ticks at a round step.
  double raw = span / 10, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double tick = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  double axis_y = top + lanes.size() * (lane_h + gap) + 4;
  s += "<line x1=\"" + fmt("%.1f", left) + "\" y1=\"" + fmt("%.1f", axis_y) + "\" x2=\""
       + fmt("%.1f", left + plot_w) + "\" y2=\"" + fmt("%.1f", axis_y) + "\" stroke=\"#333\"/>\n";
  for (double t = std::ceil(t0 / tick) * tick; t <= t1 + 1e-9; t += tick) {
    s += "<line x1=\"" + fmt("%.1f", x_of(t)) + "\" y1=\"" + fmt("%.1f", axis_y) + "\" x2=\""
         + fmt("%.1f", x_of(t)) + "\" y2=\"" + fmt("%.1f", axis_y + 4) + "\" stroke=\"#333\"/>\n";
    s += "<text x=\"" + fmt("%.1f", x_of(t)) + "\" y=\"" + fmt("%.1f", axis_y + 16)
         + "\" text-anchor=\"middle\">" + fmt("%g", std::round(t * 100) / 100) + " s</text>\n";
  }
  s += "</svg>\n";
  return s;
}

} // namespace leap::bench
