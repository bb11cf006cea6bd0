// One training run as `leap report` reads it: the rows of RUN_DIR/metrics.jsonl (one per learner
// step, as `leap train` writes them) and the facts its checkpoint records (tasks, seed, task-suite
// hash). Plain file reading and JSON parsing; no CAF, no LibTorch. Any thread may call these
// functions; they share no state.
#pragma once

#include "common/result.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace leap::report {

// A step's held-out evaluation (train.eval_every; the row's "heldout" object).
struct heldout_set_row {
  std::string name;                   // eval | generated_instance | generated_composition
  long long tasks = 0, attempts = 0;
  double acc_at_1 = 0, acc_at_3 = 0;
};
struct heldout_row {
  double acc_at_1 = 0, acc_at_3 = 0;
  long long tasks = 0, attempts = 0;
  long long compiles = 0, cache_hits = 0; // the evaluation's own, not the step's
  double seconds = 0;                 // its wall-clock, not in the step's step_seconds
  std::vector<heldout_set_row> sets;
  long long compile_requests() const { return compiles + cache_hits; }
};

// One metrics.jsonl line (fields as runtime/workflows/metrics_writer.cpp writes them).
struct step_row {
  long long step = 0;
  double acc_at_1 = 0, acc_at_2 = 0, acc_at_3 = 0;
  double turns_per_pass = 0;
  double activated_groups = 0;        // fraction of the step's groups DCP sent to later turns
  std::optional<double> recovery;     // absent when no activated group had a turn-1 failure
  long long compiles = 0;             // real compilations (cache misses), all turns
  long long cache_hits = 0;           // compile requests answered by the build cache
  long long compiles_later_turns = 0; // compile requests of turns >= 2 (hits included)
  long long attempts = 0;
  double step_seconds = 0;
  double loss = 0, kl = 0, clip_fraction = 0, grad_norm = 0;
  double util_generate = 0, util_compile = 0, util_execute = 0;
  std::string outcome;                // trained | no_signal | failed
  // What the infrastructure cost the step ("infra"; runs written before it have zeros):
  long long dropped = 0;              // attempts lost (never judged)
  long long jobs_retried = 0;         // compile and execute tries repeated after a fault
  long long nodes_lost = 0, nodes_rejoined = 0;
  long long jobs_rerun = 0;           // jobs run again on another node after a loss
  std::optional<heldout_row> heldout; // present on the steps that had a held-out evaluation

  // Compile requests, all turns: every candidate sent to the compiler (hits included).
  long long compile_requests() const { return compiles + cache_hits; }
  // Compile requests of turn 1 (hits included): all requests minus those of later turns.
  long long compile_requests_turn1() const {
    return std::max(0LL, compile_requests() - compiles_later_turns);
  }
};

struct run_data {
  std::string name;                   // the run directory's last component
  std::string dir;
  std::vector<step_row> steps;        // in file order (a resumed run's log is truncated first)
  std::vector<double> wall_seconds;   // per step: sum of step_seconds up to and including it
  // per step: wall_seconds plus the held-out evaluations' seconds up to and including it (the
  // run's elapsed time at the end of the step's row)
  std::vector<double> elapsed_seconds;
  // per step: compile requests (all turns, cache hits included) up to and including it, what
  // train.max_compiles counts
  std::vector<long long> compile_requests_spent;
  std::vector<std::string> tasks;     // from checkpoint/trainer_state.json, when present
  std::string task_suite;             // its task-suite hash, when recorded
  std::string warning;                // e.g. a torn last line that was skipped
};

// Reads RUN_DIR/metrics.jsonl. A torn last line (a killed writer) is skipped with a warning; any
// other bad line is an error naming the file, line and field.
result<run_data> load_run(const std::string& dir);

// The points of one arm's runs, for mean_series: for every run r with arm_of_run[r] == arm, the
// points (x, y) that point(runs[r], i) gives for its steps i in order (a
// std::optional<std::pair<double, double>>; none = no point at that step). Runs without any point
// are left out.
template <class Point>
std::vector<std::vector<std::pair<double, double>>>
arm_points(const std::vector<run_data>& runs, const std::vector<int>& arm_of_run, int arm,
           Point point) {
  std::vector<std::vector<std::pair<double, double>>> out;
  for (std::size_t r = 0; r < runs.size() && r < arm_of_run.size(); ++r) {
    if (arm_of_run[r] != arm)
      continue;
    std::vector<std::pair<double, double>> pts;
    for (std::size_t i = 0; i < runs[r].steps.size(); ++i)
      if (auto p = point(runs[r], i))
        pts.push_back(*p);
    if (!pts.empty())
      out.push_back(std::move(pts));
  }
  return out;
}

// Mean of `f` over the last `n` steps (fewer when the run is shorter); nullopt for no steps.
template <class F>
std::optional<double> tail_mean(const run_data& r, std::size_t n, F f) {
  if (r.steps.empty())
    return std::nullopt;
  std::size_t k = std::min(n, r.steps.size());
  double s = 0;
  for (std::size_t i = r.steps.size() - k; i < r.steps.size(); ++i)
    s += f(r.steps[i]);
  return s / static_cast<double>(k);
}

} // namespace leap::report
