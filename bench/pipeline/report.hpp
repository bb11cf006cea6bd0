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

// Each node's part of a run, in one line: "HOST:PORT compile 12 (3 from its cache), execute 9,
// CPU 4.1 s; ..." ("" without nodes).
// One number through a printf format of one double ("%.2f", "%.2fx", "%+.1f%%"); the text and
// Markdown reports share it.
std::string format_number(const char* printf_format, double v);

std::string render_node_figures(const std::vector<node_figures>& nodes);

std::string render_table(const comparison& c);
std::string render_csv(const comparison& c);
std::string render_json(const comparison& c); // one line, no newline

// A real-stage scenario with `[bench] nodes`: the async mode with compile and execute in this
// process (nodes = 0) or on that many local `leap node` processes, same steps and seeds.
struct real_cluster_row {
  int nodes = 0;
  mode_figures async;               // async.nodes: each node's part
  double nodes_cpu_seconds = -1;    // the node processes and their children during the run
};
// Its table (one row per count; ratios against the in-process row), CSV and JSON.
std::string render_real_cluster_table(const std::vector<real_cluster_row>& rows);
std::string render_real_cluster_csv(const std::string& scenario,
                                    const std::vector<real_cluster_row>& rows);
std::string render_real_cluster_json(const std::string& scenario, const std::string& shape,
                                     const std::vector<real_cluster_row>& rows); // one line
// The figures of a row: all jobs of the stage, references included (on the nodes: what they
// completed; in-process: what the head's pools ran), and CPU seconds per attempt of the head,
// the nodes and both. The tables add the candidate builds a build cache answered
// (mode_figures::cache_hits, the same count wherever they ran).
struct real_cluster_derived {
  std::uint64_t compile_jobs = 0, execute_jobs = 0;
  double head_cpu_per_attempt = -1, nodes_cpu_per_attempt = -1, cpu_per_attempt = -1;
};
real_cluster_derived derive(const real_cluster_row& r);

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
