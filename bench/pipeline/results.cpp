#include "bench/pipeline/results.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include <sched.h>

namespace leap::bench {

double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::min(std::max<std::size_t>(rank, 1), v.size());
  return v[rank - 1];
}

namespace {

stage_figures stage_of(const pool_run& p, double wall) {
  stage_figures f;
  f.stage = p.stage;
  f.workers = p.workers;
  f.on_nodes = p.on_nodes;
  std::map<std::uint64_t, double> queued;
  std::map<std::pair<std::uint64_t, std::uint32_t>, double> running;
  // Busy spans per worker slot. A generator decodes several prompts of one batch at once, so
  // its jobs overlap on one slot: the slot is busy for the union of its spans, not their sum.
  std::map<std::uint32_t, std::vector<std::pair<double, double>>> spans;
  std::vector<double> waits;
  for (const auto& e : p.events) {
    using k = job_event::kind;
    switch (e.what) {
      case k::queued:
        queued.emplace(e.id, e.t); // the first arrival counts (a retry is not a new arrival)
        break;
      case k::started: {
        ++f.jobs;
        running[{e.id, e.slot}] = e.t;
        auto q = queued.find(e.id);
        if (q != queued.end()) {
          waits.push_back(std::max(0.0, e.t - q->second));
          queued.erase(q);
        }
        break;
      }
      case k::finished: {
        auto r = running.find({e.id, e.slot});
        if (r != running.end()) {
          spans[e.slot].emplace_back(r->second, std::max(r->second, e.t));
          running.erase(r);
        }
        break;
      }
      case k::withdrawn:
        queued.erase(e.id);
        break;
    }
  }
  for (auto& [key, t0] : running) // still running at the end: busy until the end
    spans[key.second].emplace_back(t0, std::max(t0, wall));
  auto union_of = [](std::vector<std::pair<double, double>> v) {
    if (v.empty())
      return 0.0;
    std::sort(v.begin(), v.end());
    double total = 0, open = v.front().first, close = v.front().second;
    for (const auto& [a, b] : v) {
      if (a > close) {
        total += close - open;
        open = a;
      }
      close = std::max(close, b);
    }
    return total + (close - open);
  };
  // The generator pool has more slots than replicas (each replica batches several slots' prompts):
  // its `workers` replicas are busy at most workers x the time any slot was busy.
  std::vector<std::pair<double, double>> all;
  double per_slot = 0;
  for (auto& [slot, v] : spans) {
    per_slot += union_of(v);
    all.insert(all.end(), v.begin(), v.end());
  }
  f.busy_seconds = std::min(per_slot, f.workers * union_of(all));
  f.utilisation = wall > 0 && f.workers > 0 ? f.busy_seconds / (wall * f.workers) : 0.0;
  f.queue_p50 = percentile(waits, 0.50);
  f.queue_p99 = percentile(waits, 0.99);
  return f;
}

} // namespace

mode_figures figures_of(const mode_run& r) {
  mode_figures f;
  f.mode = r.mode;
  f.steps = static_cast<int>(r.steps.size());
  f.wall_seconds = r.wall_seconds;
  for (const auto& s : r.steps) {
    f.attempts += s.attempts;
    f.groups += s.groups;
    f.compiles += s.compiles;
    f.compiles_later_turns += s.compiles_later_turns;
    f.cancelled_attempts += s.cancelled;
    f.cache_hits += s.cache_hits;
    f.acc_at_1 += s.acc_at_1;
    f.acc_at_3 += s.acc_at_3;
    f.activated += s.activated;
  }
  if (f.steps > 0) {
    f.acc_at_1 /= f.steps;
    f.acc_at_3 /= f.steps;
    f.activated /= f.steps;
  }
  if (r.wall_seconds > 0) {
    f.attempts_per_second = static_cast<double>(f.attempts) / r.wall_seconds;
    f.groups_per_second = static_cast<double>(f.groups) / r.wall_seconds;
  }
  for (const auto& p : r.pools) {
    f.stages.push_back(stage_of(p, r.wall_seconds));
    if (p.stage == "compile")
      f.compiles_cancelled = p.cancelled;
  }
  double lb = 0;
  for (auto& [a, b] : r.learner) // clipped to the run
    lb += std::max(0.0, std::min(b, r.wall_seconds) - std::max(a, 0.0));
  f.learner_busy = r.wall_seconds > 0 ? lb / r.wall_seconds : 0.0;
  f.cpu_seconds = r.cpu_seconds;
  f.nodes = r.nodes;
  if (r.cpu_seconds >= 0 && f.attempts > 0) {
    f.cpu_seconds_per_attempt = r.cpu_seconds / static_cast<double>(f.attempts);
    f.cpu_self_seconds_per_attempt = r.cpu_self_seconds / static_cast<double>(f.attempts);
  }
  return f;
}

bound_figures analytic_bound(const nominal_service& nominal, const mode_figures& ref,
                             std::uint32_t generators, std::uint32_t compilers,
                             std::uint32_t executors, unsigned cores) {
  bound_figures b;
  auto busy_of = [&](const std::string& stage) {
    for (auto& s : ref.stages)
      if (s.stage == stage)
        return s.busy_seconds;
    return 0.0;
  };
  const double attempts = static_cast<double>(ref.attempts);
  auto add = [&](const std::string& stage, double nominal_s, std::uint32_t workers) {
    for (auto& s : ref.stages)
      if (s.stage == stage && s.on_nodes && nominal_s < 0)
        return;
    bound_figures::stage_capacity c;
    c.stage = stage;
    double per_attempt = nominal_s;
    if (nominal_s < 0) {
      c.measured = true;
      per_attempt = attempts > 0 ? busy_of(stage) / attempts : 0.0;
    }
    c.attempts_per_second = per_attempt > 0 ? workers / per_attempt
                                            : std::numeric_limits<double>::infinity();
    b.stages.push_back(c);
  };
  add("generate", nominal.generate, generators);
  add("compile", nominal.compile, compilers);
  add("execute", nominal.execute, executors);
  if (nominal.learner_step > 0 && ref.steps > 0) {
    bound_figures::stage_capacity c;
    c.stage = "learner";
    c.measured = true; // attempts per step come from the run
    c.attempts_per_second = attempts / ref.steps / nominal.learner_step;
    b.stages.push_back(c);
  }
  if (cores > 0 && ref.cpu_seconds_per_attempt > 0) {
    b.cores = cores;
    b.cpu_seconds_per_attempt = ref.cpu_seconds_per_attempt;
    bound_figures::stage_capacity c;
    c.stage = "cpu";
    c.measured = true;
    c.attempts_per_second = cores / ref.cpu_seconds_per_attempt;
    b.stages.push_back(c);
  }
  b.attempts_per_second = std::numeric_limits<double>::infinity();
  for (auto& c : b.stages)
    if (c.attempts_per_second < b.attempts_per_second - 1e-12) {
      b.attempts_per_second = c.attempts_per_second;
      b.bottleneck = c.stage;
    }
  // Ties (balanced stages) are all bottlenecks.
  for (auto& c : b.stages)
    if (c.stage != b.bottleneck && std::fabs(c.attempts_per_second - b.attempts_per_second)
                                     <= 1e-9 * std::max(1.0, b.attempts_per_second))
      b.bottleneck += "=" + c.stage;
  return b;
}

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<node_figures> node_figures_between(const std::vector<node_figures>& before,
                                               const std::vector<node_figures>& after) {
  std::vector<node_figures> out;
  for (std::size_t i = 0; i < after.size(); ++i) {
    node_figures f = after[i];
    f.cpu_seconds = -1;
    const node_figures* b = i < before.size() && before[i].node == f.node ? &before[i] : nullptr;
    if (!b) {
      if (f.problem.empty())
        f.problem = "not asked before the run";
    } else if (f.problem.empty() && !b->problem.empty()) {
      f.problem = b->problem;
    }
    if (f.problem.empty()) {
      auto minus = [](std::uint64_t a, std::uint64_t z) { return a >= z ? a - z : 0; };
      f.compiles = minus(f.compiles, b->compiles);
      f.executes = minus(f.executes, b->executes);
      f.compile_cache_hits = minus(f.compile_cache_hits, b->compile_cache_hits);
    }
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace leap::bench
