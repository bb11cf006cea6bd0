// The DCP gatekeeper: owns every admitted group from its first sample to its last verdict. The
// rollout driver (actors/rollout_driver.hpp) carries each group through compile, reference,
// execute and the pure rollout state machine (algo/rollout.hpp); the gatekeeper is its owner in
// training: it samples each turn from the generator pool (rendering the prompts, extracting the
// code), sends the driver's jobs to the compiler and executor pools metered (actors/stage_meter.hpp)
// and, in sync mode, behind a barrier per stage (actors/stage_barrier.hpp), and keeps each group's
// records (actors/group_record.hpp). A job that fails on every try drops its attempt, never judges
// it. Every finished group goes to the judge with its records.
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
