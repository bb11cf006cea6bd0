// Benchmark harness: a `leap bench` scenario file. The run's shape comes from the ordinary leap
// sections ([train]: B, G, max_turns, DCP thresholds, staleness, steps, seed, generators;
// [compiler] / [executor]: pool sizes; any other section), read by the ordinary config loader.
// The [bench] section says, for each stage, whether the real thing runs or a latency model
// stands in for it, and (for latency-model execution) the per-turn success probabilities of the
// synthetic task classes that drive DCP. Latency models exist only here: `leap train` never
// reads [bench]. Pure (toml++ only); any thread.
#pragma once

#include "bench/pipeline/latency_model.hpp"
#include "common/result.hpp"
#include "runtime/config/config.hpp"

#include <string>
#include <vector>

namespace leap::bench {

// A stage: the real thing (`real` = true) or a latency model.
struct stage_model {
  bool real = false;
  latency_dist dist;  // latency model only
  std::string name;   // as written: fixed | lognormal | policy | nvcc | backend
};

// Synthetic tasks "<name>_<i>", i = 1..count; success[t] = probability that an attempt still
// failing after t turns passes on turn t + 1 (the last value repeats for later turns).
struct task_class {
  std::string name;
  int count = 1;
  std::vector<double> success;
};

struct scenario {
  std::string path;
  std::string name;               // the file's stem
  config::leap_config cfg;        // the ordinary sections
  config::key_origins origins;    // where their keys were set (file position or --set)
  double time_scale = 1.0;        // latency models run in time_scale x their scenario seconds
  std::uint64_t seed = 1;         // latency and outcome draws
  int timeline_step = 0;          // the step drawn in the SVG timelines; 0 = the middle one
  stage_model generate, compile, execute;
  double learner_seconds = 0.0;   // the learner's update time per step (a latency model)
  std::string checkpoint;         // generate = policy: the checkpoint to sample from
  std::string compile_source = "bundled"; // compile = nvcc: bundled (corpus variants) | policy
  std::vector<task_class> tasks;  // latency-model execution only
  // A cluster scenario (configs/bench/cluster.toml): the async mode with compile and execute on
  // this many `leap bench node` processes each (separate processes on loopback; with real stages
  // `leap node` processes, configs/bench/real_cluster.toml), instead of the modes (count 0: the
  // pools in the head's own process, for comparison); and how many jobs probe the per-job
  // middleman overhead (0 = none; latency-model stages only).
  std::vector<int> nodes;
  int overhead_jobs = 0;
  bool any_real() const { return generate.real || compile.real || execute.real; }
  // The synthetic task names in class order, and each one's success vector.
  std::vector<std::string> task_names() const;
  std::vector<std::vector<double>> task_success() const;
};

// Loads a scenario file: ordinary sections through config::apply_file (same errors), [bench]
// through its schema (common/toml_schema.hpp); every error starts with "<file>:<line>:<column>: "
// and names the key as the config's errors do ("[bench.compile] sigma: must be at least 0 ...").
result<scenario> load_scenario(const std::string& path);

// Applies "bench.<stage>.<key>=value" / "bench.<key>=value" (from --set; any [bench] key but the
// [[bench.tasks]] classes, read and checked by the same schema as the file; on error `s` is left
// unchanged) and the sweep axes
// (compile_mean, compile_sigma, compilers, generators, executors, generate_seconds,
// execute_seconds, learner_seconds, batch_groups, group_size). Errors name the assignment.
result<void> apply_bench_override(scenario& s, const std::string& assignment);
result<void> apply_axis(scenario& s, const std::string& axis, double value);
const std::vector<std::string>& sweep_axes();

// Checks the combination (e.g. real execution needs real compilation; time_scale != 1 needs
// every stage to be a latency model) and the ordinary sections' rules across keys
// (config::check_consistency). Called by load_scenario and after overrides.
result<void> validate(const scenario& s);

} // namespace leap::bench
