// Benchmark harness: the comparison of a scenario's runs (async, sync, async with DCP off, and
// async with the other policy for a pruned group's turn-1 stragglers) and its renderings: a terminal table, CSV, and one JSON object (the last line of stdout with
// --json). Also the sweep table. Pure; any thread.
#pragma once

#include "bench/pipeline/results.hpp"

#include <string>
#include <vector>

namespace leap::bench {

struct comparison {
  std::string scenario;
  std::string shape;            // one line: B, G, turns, DCP, pools, latency models, time scale
  std::vector<mode_figures> modes; // async, sync, async_no_dcp, async_cancel_turn1 or
                                   // async_keep_turn1 (those that ran)
  bound_figures bound;
  double fraction_of_bound = 0;         // async attempts/s / bound
  double speedup_vs_sync = 0;           // async attempts/s / sync attempts/s
  double dcp_multiturn_compile_reduction = 0; // 1 - later-turn compiles (DCP) / (DCP off)
  std::int64_t compiles_avoided_by_dcp = 0;   // later-turn compiles (DCP off) - (DCP)
  std::uint64_t compiles_avoided_by_cancellation = 0; // async: compile jobs cancelled
  // The other turn-1 straggler policy (train.cancel_pruned_turn1 flipped), against async.
  std::string turn1_mode;                  // async_cancel_turn1 | async_keep_turn1 | "" (not run)
  double turn1_attempts_per_second_ratio = 0; // its attempts/s / async's
  std::uint64_t turn1_compiles_cancelled = 0;  // its compile jobs cancelled
  std::uint64_t turn1_cancelled_attempts = 0;  // its attempts cancelled (left out of the ranking)
};

const mode_figures* find_mode(const comparison& c, const std::string& mode);
// Fills the derived fields from modes and bound.
void derive(comparison& c);

std::string render_table(const comparison& c);
std::string render_csv(const comparison& c);
std::string render_json(const comparison& c); // one line, no newline

// One sweep point: the axis values and the async run's figures.
struct sweep_point {
  std::vector<std::pair<std::string, double>> axes;
  mode_figures async;
  bound_figures bound;
  std::string busiest;          // the stage with the highest measured utilisation
};
std::string render_sweep_table(const std::vector<sweep_point>& pts);
std::string render_sweep_csv(const std::vector<sweep_point>& pts);
std::string render_sweep_json(const std::vector<sweep_point>& pts);

} // namespace leap::bench
