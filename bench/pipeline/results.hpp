// Benchmark harness: what one mode's run of a scenario recorded (raw, in scenario seconds) and
// the figures derived from it: throughput, per-stage utilisation and queueing delay, the
// analytic bound, DCP's multi-turn compile reduction. Pure; any thread.
#pragma once

#include "bench/pipeline/job_trace.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leap::bench {

// One learner step as the trainer saw it.
struct step_point {
  double t = 0;                 // report time
  std::uint32_t groups = 0, attempts = 0, compiles = 0, compiles_later_turns = 0, cancelled = 0,
                cache_hits = 0;
  double acc_at_1 = 0, acc_at_3 = 0, activated = 0;
};

// One pool's trace (times already in scenario seconds).
struct pool_run {
  std::string stage;            // generate | compile | execute
  std::uint32_t workers = 1;
  std::vector<job_event> events;
  std::uint64_t cancelled = 0;  // the pool's own count: withdrawn from the queue or killed
  bool on_nodes = false;        // the stage ran on cluster nodes: no trace here (see nodes)
};

// What one node did in a run whose compile and execute stages ran on cluster nodes: the jobs
// its pools completed meanwhile (its own statistics, asked before and after the run) and, for
// a node process the benchmark started, the CPU seconds of it and of its children meanwhile.
struct node_figures {
  std::string node;             // HOST:PORT
  std::uint64_t compiles = 0, executes = 0, compile_cache_hits = 0;
  double cpu_seconds = -1;      // < 0: not measured (a node this process did not start)
  std::string problem;          // why its figures are missing (it did not answer), else empty
};

struct mode_run {
  std::string mode;             // async | sync | async_no_dcp
  double wall_seconds = 0;      // from the first admission to the last step's report
  std::vector<step_point> steps;
  std::vector<pool_run> pools;  // generate, compile, execute
  std::vector<std::pair<double, double>> learner; // update intervals
  std::optional<std::string> failure; // why the run did not complete (absent: it did)
  // CPU seconds (user + system) of this process and of the children it waited for (nvcc, the
  // host compiler, the executors' workers) from the pipeline's start to its end; < 0: not
  // measured (latency-model stages only, whose work is sleeping).
  double cpu_seconds = -1;
  double cpu_self_seconds = -1; // the part of cpu_seconds spent in this process (generation, CAF)
  std::vector<node_figures> nodes; // compile and execute on cluster nodes: each node's part
};

struct stage_figures {
  std::string stage;
  std::uint32_t workers = 0;
  std::uint64_t jobs = 0;
  double busy_seconds = 0;
  double utilisation = 0;       // busy / (workers x wall)
  double queue_p50 = 0, queue_p99 = 0; // seconds from a job's arrival at its pool to its start
  bool on_nodes = false;        // ran on cluster nodes: not traced here, left out of the bound
};

struct mode_figures {
  std::string mode;
  int steps = 0;
  double wall_seconds = 0;
  std::uint64_t attempts = 0, groups = 0, compiles = 0, compiles_later_turns = 0,
                cancelled_attempts = 0, compiles_cancelled = 0, cache_hits = 0;
  double attempts_per_second = 0, groups_per_second = 0;
  double acc_at_1 = 0, acc_at_3 = 0, activated = 0; // means over steps
  std::vector<stage_figures> stages;
  double learner_busy = 0;      // learner update seconds / wall
  double cpu_seconds = -1;      // as mode_run::cpu_seconds
  double cpu_seconds_per_attempt = -1; // cpu_seconds / attempts; < 0: not measured
  double cpu_self_seconds_per_attempt = -1; // the part spent in leap's own process
  std::vector<node_figures> nodes; // as mode_run::nodes
};

// The capacity of each stage in attempts/s and their minimum.
struct bound_figures {
  struct stage_capacity {
    std::string stage;          // generate, compile, execute, learner, cpu
    double attempts_per_second = 0;
    bool measured = false;      // from the run's own service times (real stages)
  };
  std::vector<stage_capacity> stages;
  double attempts_per_second = 0;
  std::string bottleneck;
  // The shared CPU's term (present when `cores` > 0 and the reference mode's CPU was measured):
  // cores / CPU seconds per attempt over all stages. Stages that each look fast enough in
  // isolation cannot all run at once on too few cores.
  unsigned cores = 0;
  double cpu_seconds_per_attempt = -1;
};

// Nearest-rank percentile (q in [0, 1]) of unsorted values; 0 for none.
double percentile(std::vector<double> v, double q);

mode_figures figures_of(const mode_run& r);

// A run's part of each node: `after` - `before` (the nodes' answers around the run), node by
// node; a node missing before, or with a problem in either answer, keeps a problem instead;
// cpu_seconds is left unmeasured.
std::vector<node_figures> node_figures_between(const std::vector<node_figures>& before,
                                               const std::vector<node_figures>& after);

// Nominal service seconds per attempt for latency-model stages (negative = real: measure it).
struct nominal_service {
  double generate = -1, compile = -1, execute = -1, learner_step = 0;
};
// workers per stage in the order generate, compile, execute. The bound is the smallest of each
// stage's isolated capacity (workers / service seconds per attempt) and, when `cores` > 0 and
// the reference mode's CPU was measured, of the CPU term cores / (CPU seconds per attempt). A
// stage the reference ran on cluster nodes has no measured service time here: it is left out.
bound_figures analytic_bound(const nominal_service& nominal, const mode_figures& reference,
                             std::uint32_t generators, std::uint32_t compilers,
                             std::uint32_t executors, unsigned cores = 0);

// The CPUs this process may run on (sched_getaffinity; hardware_concurrency without it).
unsigned usable_cores();

} // namespace leap::bench
