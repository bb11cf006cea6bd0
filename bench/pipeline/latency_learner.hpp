// Benchmark harness only (`leap bench`): a learner whose optimizer step is a latency model. It
// keeps the real learner's typed interface and protocol (every B scored groups one step, the
// step report from the same bookkeeping, a new policy version, checkpoint requests answered)
// but the update is a timed pause (a delayed message, so no thread is blocked) and the new
// version is only a number the latency-model generators stamp on their samples. Spawned through
// the pipeline assembly's stage hooks by bench/pipeline/run_mode.cpp.
#pragma once

#include "actors/batch_buffer.hpp"
#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace leap::bench {

struct latency_learner_options {
  int batch_groups = 4;
  msg::batch_order order = msg::batch_order::finish; // which B groups make a step
  std::chrono::steady_clock::duration update{};     // wall time of one step's update
  std::size_t task_count = 0;
  std::shared_ptr<std::atomic<std::int64_t>> policy_version; // bumped after each update
  // Called on the learner's thread with each update's start and end (steady clock).
  std::function<void(std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point)>
    on_update;
};

// A save request is answered with a checkpoint_saved that names no files: a benchmark writes
// no checkpoints.
msg::learner_actor spawn_latency_learner(caf::actor_system& sys, latency_learner_options opts);

} // namespace leap::bench
