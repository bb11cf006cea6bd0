#include "bench/pipeline/report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace leap::bench {

std::string format_number(const char* printf_format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

namespace {

std::string pad(std::string s, std::size_t w, bool right = true) {
  if (s.size() >= w)
    return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

const stage_figures* stage(const mode_figures& m, const std::string& name) {
  for (auto& s : m.stages)
    if (s.stage == name)
      return &s;
  return nullptr;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

} // namespace

const mode_figures* find_mode(const comparison& c, const std::string& mode) {
  for (auto& m : c.modes)
    if (m.mode == mode)
      return &m;
  return nullptr;
}

void derive(comparison& c) {
  auto* a = find_mode(c, "async");
  auto* s = find_mode(c, "sync");
  auto* n = find_mode(c, "async_no_dcp");
  if (a && c.bound.attempts_per_second > 0 && std::isfinite(c.bound.attempts_per_second))
    c.fraction_of_bound = a->attempts_per_second / c.bound.attempts_per_second;
  if (a && s && s->attempts_per_second > 0)
    c.speedup_vs_sync = a->attempts_per_second / s->attempts_per_second;
  if (a && n) {
    c.compiles_avoided_by_dcp = static_cast<std::int64_t>(n->compiles_later_turns)
                                - static_cast<std::int64_t>(a->compiles_later_turns);
    c.dcp_multiturn_compile_reduction =
      n->compiles_later_turns > 0
        ? 1.0 - static_cast<double>(a->compiles_later_turns) / static_cast<double>(n->compiles_later_turns)
        : 0.0;
  }
  if (a)
    c.compiles_avoided_by_cancellation = a->compiles_cancelled;
  for (const char* name : {"async_cancel_turn1", "async_keep_turn1"})
    if (auto* t = find_mode(c, name)) {
      c.turn1_mode = name;
      c.turn1_attempts_per_second_ratio =
        a && a->attempts_per_second > 0 ? t->attempts_per_second / a->attempts_per_second : 0.0;
      c.turn1_compiles_cancelled = t->compiles_cancelled;
      c.turn1_cancelled_attempts = t->cancelled_attempts;
    }
}

std::string render_node_figures(const std::vector<node_figures>& nodes) {
  std::string out;
  for (auto& n : nodes) {
    out += (out.empty() ? "" : "; ") + n.node;
    if (!n.problem.empty()) {
      out += " (no figures: " + n.problem + ")";
      continue;
    }
    out += " compile " + std::to_string(n.compiles);
    if (n.compile_cache_hits > 0)
      out += " (" + std::to_string(n.compile_cache_hits) + " from its cache)";
    out += ", execute " + std::to_string(n.executes);
    if (n.cpu_seconds >= 0)
      out += ", CPU " + format_number("%.1f", n.cpu_seconds) + " s";
  }
  return out;
}

std::string render_table(const comparison& c) {
  std::ostringstream o;
  o << "scenario " << c.scenario << ": " << c.shape << "\n\n";
  o << pad("mode", 19, false) << pad("steps", 6) << pad("wall s", 9) << pad("attempts", 9)
    << pad("att/s", 8) << pad("groups/s", 9) << pad("compiles", 9) << pad("turn>=2", 8)
    << pad("cancel", 7) << pad("util gen/comp/exec/learn", 26) << pad("queue p50/p99 s: gen", 22)
    << pad("compile", 14) << pad("execute", 14) << "\n";
  for (auto& m : c.modes) {
    std::string util, q[3];
    const char* names[3] = {"generate", "compile", "execute"};
    for (int i = 0; i < 3; ++i) {
      auto* s = stage(m, names[i]);
      const bool here = s && !s->on_nodes;
      util += (i ? "/" : "") + (here ? format_number("%.2f", s->utilisation) : std::string("-"));
      q[i] = here ? format_number("%.2f", s->queue_p50) + "/" + format_number("%.2f", s->queue_p99) : "-";
    }
    util += "/" + format_number("%.2f", m.learner_busy);
    o << pad(m.mode, 19, false) << pad(std::to_string(m.steps), 6) << pad(format_number("%.1f", m.wall_seconds), 9)
      << pad(std::to_string(m.attempts), 9) << pad(format_number("%.2f", m.attempts_per_second), 8)
      << pad(format_number("%.3f", m.groups_per_second), 9) << pad(std::to_string(m.compiles), 9)
      << pad(std::to_string(m.compiles_later_turns), 8) << pad(std::to_string(m.compiles_cancelled), 7)
      << pad(util, 26) << pad(q[0], 22) << pad(q[1], 14) << pad(q[2], 14) << "\n";
  }
  o << "\nanalytic bound " << format_number("%.3f", c.bound.attempts_per_second) << " attempts/s (";
  for (std::size_t i = 0; i < c.bound.stages.size(); ++i) {
    auto& s = c.bound.stages[i];
    o << (i ? ", " : "") << s.stage << " " << format_number("%.3f", s.attempts_per_second)
      << (s.measured ? " measured" : "");
    if (s.stage == "cpu")
      o << ": " << c.bound.cores << " cores / " << format_number("%.3f", c.bound.cpu_seconds_per_attempt)
        << " CPU s per attempt";
  }
  o << "); bottleneck: " << c.bound.bottleneck << "\n";
  std::string cpu;
  for (auto& m : c.modes)
    if (m.cpu_seconds_per_attempt >= 0)
      cpu += (cpu.empty() ? "" : ", ") + m.mode + " " + format_number("%.3f", m.cpu_seconds_per_attempt)
             + " (leap " + format_number("%.3f", m.cpu_self_seconds_per_attempt) + ")";
  if (!cpu.empty())
    o << "CPU seconds per attempt, all stages (of which in leap's own process: generation, CAF): "
      << cpu << "\n";
  if (auto* a = find_mode(c, "async")) {
    o << "async: " << format_number("%.3f", a->attempts_per_second) << " attempts/s = "
      << format_number("%.3f", c.fraction_of_bound) << " of the bound";
    if (find_mode(c, "sync"))
      o << ", " << format_number("%.2f", c.speedup_vs_sync) << "x sync";
    o << "\n";
  }
  if (auto* n = find_mode(c, "async_no_dcp")) {
    auto* a = find_mode(c, "async");
    o << "DCP: compiles on turns >= 2 " << (a ? a->compiles_later_turns : 0) << " with DCP, "
      << n->compiles_later_turns << " without: dcp_multiturn_compile_reduction "
      << format_number("%.3f", c.dcp_multiturn_compile_reduction) << " (" << c.compiles_avoided_by_dcp
      << " compiles avoided)\n";
  }
  for (auto& m : c.modes)
    if (!m.nodes.empty())
      o << m.mode << " on the nodes: " << render_node_figures(m.nodes) << "\n";
  o << "compile jobs cancelled when their group was pruned (async): "
    << c.compiles_avoided_by_cancellation << "\n";
  if (!c.turn1_mode.empty()) {
    auto* a = find_mode(c, "async");
    auto* t = find_mode(c, c.turn1_mode);
    o << "turn-1 stragglers of pruned groups " << (c.turn1_mode == "async_cancel_turn1" ? "cancelled" : "kept")
      << " (" << c.turn1_mode << "): " << format_number("%.3f", t->attempts_per_second) << " attempts/s = "
      << format_number("%.3f", c.turn1_attempts_per_second_ratio) << "x async, Acc@1 " << format_number("%.3f", t->acc_at_1)
      << " vs " << format_number("%.3f", a ? a->acc_at_1 : 0.0) << ", " << c.turn1_compiles_cancelled
      << " compile jobs and " << c.turn1_cancelled_attempts
      << " attempts cancelled (left out of the ranking)\n";
  }
  return o.str();
}

std::string render_csv(const comparison& c) {
  std::ostringstream o;
  o << "scenario,mode,steps,wall_seconds,attempts,groups,attempts_per_second,groups_per_second,"
       "compiles,compiles_later_turns,compiles_cancelled,cancelled_attempts,cache_hits,"
       "util_generate,util_compile,util_execute,util_learner,queue_p50_generate,queue_p99_generate,"
       "queue_p50_compile,queue_p99_compile,queue_p50_execute,queue_p99_execute,acc_at_1,acc_at_3\n";
  for (auto& m : c.modes) {
    o << c.scenario << "," << m.mode << "," << m.steps << "," << format_number("%.4f", m.wall_seconds) << ","
      << m.attempts << "," << m.groups << "," << format_number("%.4f", m.attempts_per_second) << ","
      << format_number("%.5f", m.groups_per_second) << "," << m.compiles << "," << m.compiles_later_turns << ","
      << m.compiles_cancelled << "," << m.cancelled_attempts << "," << m.cache_hits;
    for (const char* n : {"generate", "compile", "execute"}) {
      auto* s = stage(m, n);
      o << "," << format_number("%.4f", s ? s->utilisation : 0.0);
    }
    o << "," << format_number("%.4f", m.learner_busy);
    for (const char* n : {"generate", "compile", "execute"}) {
      auto* s = stage(m, n);
      o << "," << format_number("%.4f", s ? s->queue_p50 : 0.0) << "," << format_number("%.4f", s ? s->queue_p99 : 0.0);
    }
    o << "," << format_number("%.4f", m.acc_at_1) << "," << format_number("%.4f", m.acc_at_3) << "\n";
  }
  return o.str();
}

namespace {

nlohmann::json node_json(const node_figures& n) {
  nlohmann::json j;
  j["node"] = n.node;
  j["compiles"] = n.compiles;
  j["executes"] = n.executes;
  j["compile_cache_hits"] = n.compile_cache_hits;
  if (n.cpu_seconds >= 0)
    j["cpu_seconds"] = n.cpu_seconds;
  if (!n.problem.empty())
    j["problem"] = n.problem;
  return j;
}

nlohmann::json mode_json(const mode_figures& m) {
  nlohmann::json j;
  j["steps"] = m.steps;
  j["wall_seconds"] = m.wall_seconds;
  j["attempts"] = m.attempts;
  j["groups"] = m.groups;
  j["attempts_per_second"] = m.attempts_per_second;
  j["groups_per_second"] = m.groups_per_second;
  j["compiles"] = m.compiles;
  j["compiles_later_turns"] = m.compiles_later_turns;
  j["compiles_cancelled"] = m.compiles_cancelled;
  j["cancelled_attempts"] = m.cancelled_attempts;
  j["cache_hits"] = m.cache_hits;
  if (m.cpu_seconds >= 0) {
    j["cpu_seconds"] = m.cpu_seconds;
    j["cpu_seconds_per_attempt"] = m.cpu_seconds_per_attempt;
    j["cpu_self_seconds_per_attempt"] = m.cpu_self_seconds_per_attempt;
  }
  j["acc_at_1"] = m.acc_at_1;
  j["acc_at_3"] = m.acc_at_3;
  j["activated_groups"] = m.activated;
  j["learner_utilisation"] = m.learner_busy;
  for (auto& s : m.stages) {
    nlohmann::json st;
    st["workers"] = s.workers;
    st["jobs"] = s.jobs;
    st["busy_seconds"] = s.busy_seconds;
    st["utilisation"] = s.utilisation;
    st["queue_p50_seconds"] = s.queue_p50;
    st["queue_p99_seconds"] = s.queue_p99;
    if (s.on_nodes)
      st["on_nodes"] = true;
    j["stages"][s.stage] = st;
  }
  for (auto& n : m.nodes)
    j["nodes"].push_back(node_json(n));
  return j;
}

nlohmann::json bound_json(const bound_figures& b) {
  nlohmann::json j;
  j["attempts_per_second"] = finite_or_zero(b.attempts_per_second);
  j["bottleneck"] = b.bottleneck;
  if (b.cores > 0) {
    j["cores"] = b.cores;
    j["cpu_seconds_per_attempt"] = b.cpu_seconds_per_attempt;
  }
  for (auto& s : b.stages)
    j["stages"][s.stage] = {{"attempts_per_second", finite_or_zero(s.attempts_per_second)},
                            {"measured", s.measured}};
  return j;
}

} // namespace

std::string render_json(const comparison& c) {
  nlohmann::json j;
  j["scenario"] = c.scenario;
  j["shape"] = c.shape;
  auto rate = [&](const char* mode) {
    auto* m = find_mode(c, mode);
    return m ? m->attempts_per_second : 0.0;
  };
  j["async_attempts_per_second"] = rate("async");
  j["sync_attempts_per_second"] = rate("sync");
  j["async_no_dcp_attempts_per_second"] = rate("async_no_dcp");
  j["speedup_vs_sync"] = c.speedup_vs_sync;
  j["analytic_bound_attempts_per_second"] = finite_or_zero(c.bound.attempts_per_second);
  j["fraction_of_bound"] = c.fraction_of_bound;
  j["dcp_multiturn_compile_reduction"] = c.dcp_multiturn_compile_reduction;
  j["compiles_avoided_by_dcp"] = c.compiles_avoided_by_dcp;
  j["compiles_avoided_by_cancellation"] = c.compiles_avoided_by_cancellation;
  j["turn1_mode"] = c.turn1_mode;
  j["turn1_attempts_per_second_ratio"] = c.turn1_attempts_per_second_ratio;
  j["turn1_compiles_cancelled"] = c.turn1_compiles_cancelled;
  j["turn1_cancelled_attempts"] = c.turn1_cancelled_attempts;
  j["bound"] = bound_json(c.bound);
  for (auto& m : c.modes)
    j["modes"][m.mode] = mode_json(m);
  return j.dump();
}

std::string render_sweep_table(const std::vector<sweep_point>& pts) {
  std::ostringstream o;
  if (pts.empty())
    return "";
  for (auto& [k, v] : pts[0].axes)
    o << pad(k, 14, false);
  o << pad("att/s", 9) << pad("bound", 9) << pad("of bound", 9) << pad("util g/c/e", 16)
    << "  bottleneck (analytic)   busiest (measured)\n";
  for (auto& p : pts) {
    for (auto& [k, v] : p.axes)
      o << pad(format_number("%g", v), 14, false);
    std::string util;
    for (const char* n : {"generate", "compile", "execute"}) {
      auto* s = stage(p.async, n);
      util += (util.empty() ? "" : "/") + format_number("%.2f", s ? s->utilisation : 0.0);
    }
    double frac = p.bound.attempts_per_second > 0 && std::isfinite(p.bound.attempts_per_second)
                    ? p.async.attempts_per_second / p.bound.attempts_per_second : 0.0;
    o << pad(format_number("%.3f", p.async.attempts_per_second), 9)
      << pad(format_number("%.3f", finite_or_zero(p.bound.attempts_per_second)), 9) << pad(format_number("%.2f", frac), 9)
      << pad(util, 16) << "  " << pad(p.bound.bottleneck, 23, false) << "  " << p.busiest << "\n";
  }
  return o.str();
}

std::string render_sweep_csv(const std::vector<sweep_point>& pts) {
  std::ostringstream o;
  if (pts.empty())
    return "";
  for (auto& [k, v] : pts[0].axes)
    o << k << ",";
  o << "attempts_per_second,bound_attempts_per_second,fraction_of_bound,util_generate,util_compile,"
       "util_execute,bottleneck,busiest\n";
  for (auto& p : pts) {
    for (auto& [k, v] : p.axes)
      o << format_number("%g", v) << ",";
    double bound = finite_or_zero(p.bound.attempts_per_second);
    o << format_number("%.4f", p.async.attempts_per_second) << "," << format_number("%.4f", bound) << ","
      << format_number("%.4f", bound > 0 ? p.async.attempts_per_second / bound : 0.0);
    for (const char* n : {"generate", "compile", "execute"}) {
      auto* s = stage(p.async, n);
      o << "," << format_number("%.4f", s ? s->utilisation : 0.0);
    }
    o << "," << p.bound.bottleneck << "," << p.busiest << "\n";
  }
  return o.str();
}

std::string render_sweep_json(const std::vector<sweep_point>& pts) {
  nlohmann::json j = nlohmann::json::array();
  for (auto& p : pts) {
    nlohmann::json r;
    for (auto& [k, v] : p.axes)
      r["axes"][k] = v;
    r["async"] = mode_json(p.async);
    r["bound"] = bound_json(p.bound);
    r["busiest"] = p.busiest;
    j.push_back(r);
  }
  nlohmann::json out;
  out["sweep"] = j;
  return out.dump();
}

real_cluster_derived derive(const real_cluster_row& r) {
  real_cluster_derived d;
  const auto& m = r.async;
  if (!m.nodes.empty()) {
    for (auto& n : m.nodes) {
      d.compile_jobs += n.compiles;
      d.execute_jobs += n.executes;
    }
  } else {
    if (auto* s = stage(m, "compile"))
      d.compile_jobs = s->jobs;
    if (auto* s = stage(m, "execute"))
      d.execute_jobs = s->jobs;
  }
  if (m.attempts > 0) {
    const double a = static_cast<double>(m.attempts);
    if (m.cpu_seconds >= 0)
      d.head_cpu_per_attempt = m.cpu_seconds / a;
    if (r.nodes == 0)
      d.nodes_cpu_per_attempt = 0;
    else if (r.nodes_cpu_seconds >= 0)
      d.nodes_cpu_per_attempt = r.nodes_cpu_seconds / a;
    if (d.head_cpu_per_attempt >= 0 && d.nodes_cpu_per_attempt >= 0)
      d.cpu_per_attempt = d.head_cpu_per_attempt + d.nodes_cpu_per_attempt;
  }
  return d;
}

namespace {

std::string where_of(int nodes) {
  return nodes == 0 ? std::string("in-process")
                    : std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
}

double in_process_rate(const std::vector<real_cluster_row>& rows) {
  for (auto& r : rows)
    if (r.nodes == 0)
      return r.async.attempts_per_second;
  return 0;
}

std::string cpu_text(double v) { return v >= 0 ? format_number("%.3f", v) : std::string("-"); }

} // namespace

std::string render_real_cluster_table(const std::vector<real_cluster_row>& rows) {
  std::ostringstream o;
  const double base = in_process_rate(rows);
  o << pad("compile+execute", 17, false) << pad("steps", 6) << pad("wall s", 9)
    << pad("attempts", 9) << pad("att/s", 8) << pad("vs in-proc", 11) << pad("compile jobs", 13)
    << pad("cached", 7) << pad("execute jobs", 13) << pad("CPU s/attempt: head", 20) << pad("nodes", 7)
    << pad("total", 7) << "\n";
  for (auto& r : rows) {
    auto d = derive(r);
    const auto& m = r.async;
    o << pad(where_of(r.nodes), 17, false) << pad(std::to_string(m.steps), 6)
      << pad(format_number("%.1f", m.wall_seconds), 9) << pad(std::to_string(m.attempts), 9)
      << pad(format_number("%.3f", m.attempts_per_second), 8)
      << pad(base > 0 ? format_number("%.2fx", m.attempts_per_second / base) : std::string("-"), 11)
      << pad(std::to_string(d.compile_jobs), 13) << pad(std::to_string(m.cache_hits), 7)
      << pad(std::to_string(d.execute_jobs), 13)
      << pad(cpu_text(d.head_cpu_per_attempt), 20) << pad(cpu_text(d.nodes_cpu_per_attempt), 7)
      << pad(cpu_text(d.cpu_per_attempt), 7) << "\n";
  }
  for (auto& r : rows)
    if (!r.async.nodes.empty())
      o << where_of(r.nodes) << ": " << render_node_figures(r.async.nodes) << "\n";
  return o.str();
}

std::string render_real_cluster_csv(const std::string& scenario,
                                    const std::vector<real_cluster_row>& rows) {
  std::ostringstream o;
  o << "scenario,nodes,steps,wall_seconds,attempts,attempts_per_second,vs_in_process,"
       "compile_jobs,candidate_cache_hits,execute_jobs,head_cpu_seconds_per_attempt,"
       "nodes_cpu_seconds_per_attempt,"
       "cpu_seconds_per_attempt\n";
  const double base = in_process_rate(rows);
  for (auto& r : rows) {
    auto d = derive(r);
    const auto& m = r.async;
    o << scenario << "," << r.nodes << "," << m.steps << "," << format_number("%.4f", m.wall_seconds) << ","
      << m.attempts << "," << format_number("%.4f", m.attempts_per_second) << ","
      << (base > 0 ? format_number("%.4f", m.attempts_per_second / base) : std::string()) << ","
      << d.compile_jobs << "," << m.cache_hits << "," << d.execute_jobs << ","
      << (d.head_cpu_per_attempt >= 0 ? format_number("%.4f", d.head_cpu_per_attempt) : std::string()) << ","
      << (d.nodes_cpu_per_attempt >= 0 ? format_number("%.4f", d.nodes_cpu_per_attempt) : std::string()) << ","
      << (d.cpu_per_attempt >= 0 ? format_number("%.4f", d.cpu_per_attempt) : std::string()) << "\n";
  }
  return o.str();
}

std::string render_real_cluster_json(const std::string& scenario, const std::string& shape,
                                     const std::vector<real_cluster_row>& rows) {
  nlohmann::json j;
  j["scenario"] = scenario;
  j["shape"] = shape;
  j["rows"] = nlohmann::json::array();
  for (auto& r : rows) {
    auto d = derive(r);
    nlohmann::json row = mode_json(r.async);
    row["nodes_started"] = r.nodes;
    row["compile_jobs"] = d.compile_jobs;
    row["execute_jobs"] = d.execute_jobs;
    if (r.nodes_cpu_seconds >= 0)
      row["nodes_cpu_seconds"] = r.nodes_cpu_seconds;
    if (d.cpu_per_attempt >= 0)
      row["cpu_seconds_per_attempt_head_and_nodes"] = d.cpu_per_attempt;
    j["rows"].push_back(row);
  }
  return j.dump();
}

} // namespace leap::bench
