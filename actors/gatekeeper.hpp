// The DCP gatekeeper: owns every admitted group from its first sample to its last verdict.
// It sends each attempt on (generator pool -> compiler pool -> executor pool), applies
// Difficulty-Conditioned Pruning to turn-1 verdicts as soon as the verdicts in make the
// decision certain, builds the next-turn prompt (task, previous code, feedback) for each failed
// attempt of an expanded group, cancels the queued and running work of a pruned group's
// stragglers at once, and hands every finished group to the judge.
//
// mode async: each attempt flows on as soon as its own step is done. mode sync: the same path
// with stage barriers over all groups in flight: generate all, compile all, execute all (the
// trainer sends flush_atom after admitting a step's groups).
// Spawned by runtime/; talks to the pools through their typed handles.
#pragma once

#include "actors/compiler_pool.hpp"
#include "algo/dcp.hpp"
#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::actors {

struct gatekeeper_options {
  int group_size = 8;
  int max_turns = 3;
  algo::dcp_config dcp;
  bool sync = false;
  double temperature = 1.0;
  double top_p = 1.0;
  int max_new_tokens = 384;
  std::uint64_t seed = 1;
  std::string backend = "cpu";
  int max_seq_len = 2048;
  int eos_id = -1;
  // Prompt rendering and decoding (the tokenizer lives in policy/; passed as functions so this
  // actor's TU does not depend on it).
  std::function<std::vector<int>(const std::string& task, const std::vector<std::string>& codes,
                                 const std::vector<std::string>& feedbacks)> encode_prompt;
  std::function<std::string(const std::vector<int>&)> decode;
  // Workers per stage, for the utilisation figures (busy workers / workers, time-averaged).
  int generators = 1, compilers = 1, executors = 1;
  std::chrono::milliseconds generate_timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds compile_timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds exec_timeout{std::chrono::minutes(10)};
};

// Messages it takes: (group_atom, group_start), (flush_atom) in sync mode, (stats_atom) ->
// std::vector<double>{seconds since start, busy worker-seconds of generation / workers, of
// compilation / workers, of execution / workers} (differences over a step give that step's
// stage utilisation). It sends (finished_atom, group_result) to `judge`.
caf::actor spawn_gatekeeper(caf::actor_system& sys, gatekeeper_options opts,
                            std::shared_ptr<const task_catalog> tasks,
                            msg::generator_pool_actor generators,
                            msg::compiler_pool_actor compilers,
                            msg::executor_pool_actor executors, caf::actor judge);

} // namespace leap::actors
