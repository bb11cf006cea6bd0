// The DCP gatekeeper: owns every admitted group from its first sample to its last verdict. It is
// a thin adapter around the pure rollout state machine (algo/rollout.hpp), which decides what
// happens next (compile, execute, DCP, next turn, cancel, finished); the gatekeeper does the I/O:
// it renders prompts, sends requests to the generator, compiler and executor pools, turns their
// replies into the rollout's events (a job that fails on every try drops its attempt, never
// judges it), builds each task's reference once (actors/reference_cache.hpp), meters stage
// utilisation (actors/stage_meter.hpp) and, in sync mode, holds each stage's work behind a
// barrier (actors/stage_barrier.hpp). Every finished group goes to the judge with its records.
// `leap train`, `leap eval` and `leap bench` all run it (runtime/pipeline/assembly.hpp).
// Spawned by the pipeline assembly; talks to the pools and the judge through their typed handles.
#pragma once

#include "actors/compiler_pool.hpp"
#include "algo/rollout.hpp"
#include "env/backend.hpp"
#include "messages/interfaces.hpp"
#include "messages/modes.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::actors {

// Prompt rendering and decoding (the tokenizer lives in policy/; passed as functions so this
// actor's TU does not depend on it). Called on the gatekeeper's thread.
struct prompt_codec {
  // The prompt of the next turn: the task, and each earlier turn's code and feedback.
  std::function<std::vector<int>(const std::string& task, const std::vector<std::string>& codes,
                                 const std::vector<std::string>& feedbacks)>
    encode;
  std::function<std::string(const std::vector<int>&)> decode;
};

struct gatekeeper_options {
  algo::rollout_config rollout;    // G, max_turns, DCP, cancel_pruned_turn1
  msg::train_mode mode = msg::train_mode::async;
  double temperature = 1.0;
  double top_p = 1.0;
  int max_new_tokens = 384;
  std::uint64_t seed = 1;
  env::backend backend = env::backend::cpu;
  int max_seq_len = 2048;
  int eos_id = -1;
  prompt_codec codec;
  // Workers per stage, for the utilisation figures (busy workers / workers, time-averaged).
  int generators = 1, compilers = 1, executors = 1;
  std::chrono::milliseconds generate_timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds compile_timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds exec_timeout{std::chrono::minutes(10)};
};

msg::gatekeeper_actor spawn_gatekeeper(caf::actor_system& sys, gatekeeper_options opts,
                                       std::shared_ptr<const task_catalog> tasks,
                                       msg::generator_pool_actor generators,
                                       msg::compiler_pool_actor compilers,
                                       msg::executor_pool_actor executors, msg::judge_actor judge);

} // namespace leap::actors
