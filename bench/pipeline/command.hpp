// `leap bench --config configs/bench/<scenario>.toml [--json] [--out DIR] [--sweep AXIS=v1,v2 ...]`:
// runs a scenario's async, sync, DCP-off and other-turn-1-straggler-policy modes side by side
// (same steps, seeds and draws; bench/pipeline/run_mode.hpp), prints the comparison table,
// writes CSV, Markdown (stamped with date, commit, machine and command) and one SVG timeline per
// mode, and with --json ends stdout with one JSON object.
// With --sweep it runs the async mode over the cartesian product of the axes and prints where
// the bottleneck moves. The verb registers itself in the command table (command.cpp). Main
// thread; no CAF in this header.
#pragma once

#include "bench/pipeline/scenario.hpp"
#include "bench/pipeline/stamp.hpp"
#include "common/result.hpp"

#include <string>
#include <vector>

namespace leap::bench {

struct bench_args {
  std::string scenario_path;
  std::vector<std::string> sets;   // --set: bench.* go to the scenario, the rest to its config
  std::vector<std::string> sweep;  // "axis=v1,v2,..."
  std::string out_dir;             // empty = runs/bench/<scenario>
  bool json = false;
};

// 0 done, 1 a run failed, 2 bad usage or scenario.
int cmd_bench(const bench_args& args);

// The scenario file with the --set assignments applied and its rules checked.
result<scenario> load_scenario_with(const std::string& path, const std::vector<std::string>& sets);

// A cluster scenario ([bench] nodes = [1, 2, 4]; bench/pipeline/cluster_bench.cpp): the async
// mode with compile and execute on that many `leap bench node` processes, the scaling table
// against the analytic bound, and the per-job middleman overhead with and without TLS; the
// tables also go to out_dir/<scenario>.md under `stamp`.
int run_cluster_bench(const scenario& sc, const bench_args& args, const std::string& out_dir,
                      const run_stamp& stamp);

// A real-stage scenario with [bench] nodes (bench/pipeline/real_cluster_bench.cpp): the async
// mode in this process (count 0) and on that many `leap node` processes started on loopback, side
// by side; the table also goes to out_dir/<scenario>.md under `stamp`. Exit 2 when the scenario
// also lists cluster.nodes.
int run_real_cluster_bench(const scenario& sc, const bench_args& args, const std::string& out_dir,
                           const run_stamp& stamp);

// One line: B, G, turns, DCP, steps, the stages' workers and models.
std::string scenario_shape(const scenario& sc);

} // namespace leap::bench
