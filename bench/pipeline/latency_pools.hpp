// Benchmark harness only (`leap bench`; nothing in `leap train` spawns these): generator,
// compiler and executor pools whose jobs are latency models instead of the policy, nvcc and the
// backend. They are the real supervised pools (same queueing, one job per worker, cancel by id,
// retries, statistics, traces) behind the same typed interfaces, with a job runner that
// completes each job after a drawn service time on a deadline timer. Attempts are identified by
// bench::attempt_key, carried as the sampled "code" (bench/pipeline/latency_model.hpp); the
// executor's verdict is drawn from the task's per-turn success probability. Also the real
// compiler pool over bundled corpus candidates, and the same substitution in front of a
// cluster's compile stage. Spawned through the pipeline assembly's stage hooks by
// bench/pipeline/run_mode.cpp.
#pragma once

#include "actors/compiler_pool.hpp"
#include "actors/pool_options.hpp"
#include "bench/pipeline/latency_model.hpp"
#include "env/compiler.hpp"
#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace leap::bench {

// Shared by the latency-model pools and learner of one run.
struct latency_context {
  std::shared_ptr<deadline_timer> timer;
  double time_scale = 1.0;               // wall seconds per scenario second
  std::uint64_t seed = 1;
  std::shared_ptr<std::atomic<std::int64_t>> policy_version; // set by the latency learner
  std::vector<std::string> task_names;   // attempt_key::task indexes these
  std::vector<std::vector<double>> success; // per task: pass probability by turn
};

msg::generator_pool_actor spawn_latency_generator_pool(caf::actor_system& sys,
                                                       actors::pool_options opts,
                                                       latency_dist per_attempt,
                                                       std::shared_ptr<const latency_context> ctx);
// Reference builds complete at once (in a real run they come from the build cache).
msg::compiler_pool_actor spawn_latency_compiler_pool(caf::actor_system& sys,
                                                     actors::pool_options opts,
                                                     latency_dist per_compile,
                                                     std::shared_ptr<const latency_context> ctx);
msg::executor_pool_actor spawn_latency_executor_pool(caf::actor_system& sys,
                                                     actors::pool_options opts, latency_dist per_run,
                                                     std::shared_ptr<const latency_context> ctx);

// Real compilation of bundled candidates: each attempt's source is replaced by one of its task's
// `candidates` (corpus variants, correct and buggy), picked by a stable hash of the sampled
// source, then built by the real compiler (nvcc + the backend's build). References build as they
// are. For benchmarks whose policy is a latency model or writes code too weak to exercise nvcc.
// What a candidate request of spawn_bundled_compiler_pool builds: one of its task's
// `candidates`, picked by a stable hash of the sampled source and `seed`; the sampled source
// when its task has none.
std::function<std::string(const msg::compile_request&)> bundled_source_of(
  std::shared_ptr<const std::map<std::string, std::vector<std::string>>> candidates,
  std::uint64_t seed);

msg::compiler_pool_actor spawn_bundled_compiler_pool(
  caf::actor_system& sys, actors::pool_options opts, std::shared_ptr<env::compiler> comp,
  std::shared_ptr<const actors::task_catalog> tasks,
  std::shared_ptr<const std::map<std::string, std::vector<std::string>>> candidates,
  std::uint64_t seed);

// The same substitution in front of another compile stage (the cluster's: the nodes build the
// bundled candidates): a candidate request's source becomes `source_of(request)`, then the
// request goes on to `inner`, which answers it; cancel and statistics pass through. Linked to
// `inner` (either one's end ends the other).
msg::compiler_pool_actor spawn_bundled_front(
  caf::actor_system& sys, msg::compiler_pool_actor inner,
  std::function<std::string(const msg::compile_request&)> source_of);

} // namespace leap::bench
