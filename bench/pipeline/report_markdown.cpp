#include "bench/pipeline/report_markdown.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace leap::bench {

namespace {

const stage_figures* stage(const mode_figures& m, const std::string& name) {
  for (auto& s : m.stages)
    if (s.stage == name)
      return &s;
  return nullptr;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

// "1.23x", or "-" when the reference is missing or zero.
std::string ratio(double v, double ref) {
  return ref > 0 && std::isfinite(ref) ? format_number("%.2fx", v / ref) : "-";
}

const char* const who = "leap bench";

} // namespace

std::string render_markdown(const comparison& c, const run_stamp& stamp) {
  std::ostringstream o;
  o << render_stamp(stamp, who) << "\n";
  o << "Scenario `" << c.scenario << "`: " << c.shape << ".\n\n";
  const double bound = finite_or_zero(c.bound.attempts_per_second);
  auto* async = find_mode(c, "async");
  auto* sync = find_mode(c, "sync");
  o << "| mode | attempts/s | groups/s | of bound (" << format_number("%.2f", bound)
    << "/s) | vs sync | vs async | util gen / comp / exec / learner | compiles on turns >= 2 "
       "| compile jobs cancelled | attempts cancelled | wall s |\n";
  o << "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n";
  for (auto& m : c.modes) {
    std::string util;
    for (const char* n : {"generate", "compile", "execute"}) {
      auto* s = stage(m, n);
      util += (s && s->on_nodes ? std::string("nodes") : format_number("%.2f", s ? s->utilisation : 0.0)) + " / ";
    }
    util += format_number("%.2f", m.learner_busy);
    o << "| " << m.mode << " | " << format_number("%.2f", m.attempts_per_second) << " | "
      << format_number("%.3f", m.groups_per_second) << " | "
      << (bound > 0 ? format_number("%.3f", m.attempts_per_second / bound) : std::string("-")) << " | "
      << (sync ? ratio(m.attempts_per_second, sync->attempts_per_second) : "-") << " | "
      << (async ? ratio(m.attempts_per_second, async->attempts_per_second) : "-") << " | "
      << util << " | " << m.compiles_later_turns << " | " << m.compiles_cancelled << " | "
      << m.cancelled_attempts << " | " << format_number("%.1f", m.wall_seconds) << " |\n";
  }
  o << "\n- Analytic bound " << format_number("%.3f", bound) << " attempts/s (";
  for (std::size_t i = 0; i < c.bound.stages.size(); ++i) {
    auto& s = c.bound.stages[i];
    o << (i ? ", " : "") << s.stage << " " << format_number("%.3f", finite_or_zero(s.attempts_per_second))
      << (s.measured ? " measured" : "");
    if (s.stage == "cpu")
      o << ": " << c.bound.cores << " cores / " << format_number("%.3f", c.bound.cpu_seconds_per_attempt)
        << " CPU s per attempt";
  }
  o << "); bottleneck: " << c.bound.bottleneck << ".\n";
  for (auto& m : c.modes)
    if (!m.nodes.empty())
      o << "- " << m.mode << " on the nodes: " << render_node_figures(m.nodes) << ".\n";
  if (async)
    o << "- async: " << format_number("%.3f", c.fraction_of_bound) << " of the bound"
      << (sync ? ", " + format_number("%.2f", c.speedup_vs_sync) + "x sync" : std::string()) << ".\n";
  if (auto* n = find_mode(c, "async_no_dcp"))
    o << "- DCP: " << (async ? async->compiles_later_turns : 0) << " compiles on turns >= 2 with "
      << "DCP, " << n->compiles_later_turns << " without: dcp_multiturn_compile_reduction "
      << format_number("%.3f", c.dcp_multiturn_compile_reduction) << " (" << c.compiles_avoided_by_dcp
      << " compiles avoided).\n";
  if (!c.turn1_mode.empty()) {
    auto* t = find_mode(c, c.turn1_mode);
    o << "- Turn-1 stragglers of pruned groups "
      << (c.turn1_mode == "async_cancel_turn1" ? "cancelled" : "kept") << " (" << c.turn1_mode
      << "): " << format_number("%.3f", c.turn1_attempts_per_second_ratio) << "x async's attempts/s, Acc@1 "
      << format_number("%.3f", t ? t->acc_at_1 : 0.0) << " against " << format_number("%.3f", async ? async->acc_at_1 : 0.0)
      << "; " << c.turn1_compiles_cancelled << " compile jobs and " << c.turn1_cancelled_attempts
      << " attempts cancelled (left out of the ranking).\n";
  }
  std::string cpu;
  for (auto& m : c.modes)
    if (m.cpu_seconds_per_attempt >= 0)
      cpu += (cpu.empty() ? "" : ", ") + m.mode + " " + format_number("%.3f", m.cpu_seconds_per_attempt) + " (leap "
             + format_number("%.3f", m.cpu_self_seconds_per_attempt) + ")";
  if (!cpu.empty())
    o << "- CPU seconds per attempt, all stages (of which in leap's own process): " << cpu << ".\n";
  return o.str();
}

std::string render_sweep_markdown(const std::string& scenario, const std::string& shape,
                                  const std::vector<sweep_point>& pts, const run_stamp& stamp) {
  std::ostringstream o;
  o << render_stamp(stamp, who) << "\n";
  o << "Sweep of scenario `" << scenario << "` (async mode): " << shape << ".\n\n";
  if (pts.empty())
    return o.str();
  o << "|";
  for (auto& [k, v] : pts[0].axes)
    o << " " << k << " |";
  o << " attempts/s | bound | of bound | util gen / comp / exec | bottleneck (analytic) | busiest "
       "(measured) |\n|";
  for (std::size_t i = 0; i < pts[0].axes.size(); ++i)
    o << "---:|";
  o << "---:|---:|---:|---|---|---|\n";
  for (auto& p : pts) {
    o << "|";
    for (auto& [k, v] : p.axes)
      o << " " << format_number("%g", v) << " |";
    std::string util;
    for (const char* n : {"generate", "compile", "execute"}) {
      auto* s = stage(p.async, n);
      util += (util.empty() ? "" : " / ") + format_number("%.2f", s ? s->utilisation : 0.0);
    }
    double b = finite_or_zero(p.bound.attempts_per_second);
    o << " " << format_number("%.3f", p.async.attempts_per_second) << " | " << format_number("%.3f", b) << " | "
      << (b > 0 ? format_number("%.2f", p.async.attempts_per_second / b) : std::string("-")) << " | " << util
      << " | " << p.bound.bottleneck << " | " << p.busiest << " |\n";
  }
  return o.str();
}

std::string render_cluster_markdown(const std::string& scenario, const std::string& shape,
                                    const std::vector<cluster_row>& rows,
                                    const std::vector<round_trip_row>& round_trips,
                                    const run_stamp& stamp) {
  std::ostringstream o;
  o << render_stamp(stamp, who) << "\n";
  o << "Scenario `" << scenario << "`: " << shape << ".\n\n";
  double one = 0;
  for (auto& r : rows)
    if (r.nodes == 1)
      one = r.attempts_per_second;
  o << "| nodes | attempts/s | analytic bound | of bound | vs 1 node | bottleneck |\n"
       "|---|---:|---:|---:|---:|---|\n";
  for (auto& r : rows)
    o << "| " << (r.nodes == 0 ? std::string("in-process") : std::to_string(r.nodes)) << " | "
      << format_number("%.2f", r.attempts_per_second) << " | " << format_number("%.2f", r.bound) << " | "
      << (r.bound > 0 ? format_number("%.2f", r.attempts_per_second / r.bound) : std::string("-")) << " | "
      << ratio(r.attempts_per_second, one) << " | " << r.bottleneck << " |\n";
  if (!round_trips.empty()) {
    o << "\nPer-job round trip through a node (a zero-service-time compile job, 2 KiB source, jobs "
         "one after another):\n\n| transport | jobs | p50 ms | p99 ms |\n|---|---:|---:|---:|\n";
    for (auto& t : round_trips)
      o << "| " << t.transport << " | " << t.jobs << " | " << format_number("%.3f", t.p50_ms) << " | "
        << format_number("%.3f", t.p99_ms) << " |\n";
  }
  return o.str();
}

std::string render_real_cluster_markdown(const std::string& scenario, const std::string& shape,
                                         const std::vector<real_cluster_row>& rows,
                                         const run_stamp& stamp) {
  std::ostringstream o;
  o << render_stamp(stamp, who) << "\n";
  o << "Scenario `" << scenario << "`: " << shape << ".\n\n";
  double base = 0;
  for (auto& r : rows)
    if (r.nodes == 0)
      base = r.async.attempts_per_second;
  auto where = [](int n) {
    return n == 0 ? std::string("in-process") : std::to_string(n) + (n == 1 ? " node" : " nodes");
  };
  auto cpu = [](double v) { return v >= 0 ? format_number("%.3f", v) : std::string("-"); };
  o << "| compile and execute | attempts/s | vs in-process | attempts | compile jobs | candidates "
       "from a build cache | execute jobs | CPU s per attempt: head | nodes | total | wall s |\n"
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (auto& r : rows) {
    auto d = derive(r);
    o << "| " << where(r.nodes) << " | " << format_number("%.3f", r.async.attempts_per_second) << " | "
      << ratio(r.async.attempts_per_second, base) << " | " << r.async.attempts << " | "
      << d.compile_jobs << " | " << r.async.cache_hits << " | " << d.execute_jobs << " | "
      << cpu(d.head_cpu_per_attempt) << " | "
      << cpu(d.nodes_cpu_per_attempt) << " | " << cpu(d.cpu_per_attempt) << " | "
      << format_number("%.1f", r.async.wall_seconds) << " |\n";
  }
  bool any = false;
  for (auto& r : rows)
    if (!r.async.nodes.empty()) {
      o << (any ? "" : "\n") << "- " << where(r.nodes) << ": " << render_node_figures(r.async.nodes)
        << ".\n";
      any = true;
    }
  return o.str();
}

} // namespace leap::bench
