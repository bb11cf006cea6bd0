// The environment service: the typed actor behind `leap serve` (runtime/serve/) and the evaluator
// of `leap check` and `leap tasks verify` (runtime/pipeline/evaluator.hpp). It checks single
// candidates (a one-attempt, one-turn group) and runs LEAP groups for an external trainer over the
// compiler and executor pools (local, or facades over the cluster's nodes), on the same rollout
// driver the gatekeeper uses (actors/rollout_driver.hpp), with the client in the generator's
// place: turn-1 code for all G attempts arrives at once, DCP decides as the verdicts come in, and
// each expanded attempt waits for its next turn from the client. A finished group is
// scored by the judge's arithmetic (actors/group_scoring.hpp): rank rewards and the configured
// estimator's advantages.
//
// Answers: a group call is answered once every turn-1 verdict is in (or its attempt was lost); a
// turn call once that turn is judged. A turn sent again (the same attempt and turn number) gets
// the first one's outcome, never a second turn. Group ids are 128 random bits: one client cannot
// name another's group by guessing. Idle groups expire after `group_ttl` (their jobs are
// cancelled). Over `max_queue` waiting jobs (or `max_groups` open groups) calls are answered
// `busy` with a retry-after estimate. Infrastructure failures drop an attempt (out of the
// ranking) or fail a check; they are never a verdict.
// Spawned once by `leap serve` (or a test); any actor or scoped actor may call it.
#pragma once

#include "actors/compiler_pool.hpp"
#include "algo/advantages.hpp"
#include "algo/rollout.hpp"
#include "env/backend.hpp"
#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::prom {
class registry;
}

namespace leap::actors {

struct env_service_options {
  algo::rollout_config rollout;     // max_turns, DCP, cancel_pruned_turn1 (G: each call's count)
  algo::estimator_config estimator; // rewards and advantages of finished groups
  env::backend backend = env::backend::cpu;
  int compile_workers = 1, exec_workers = 1; // the pools' sizes (what is queued beyond them)
  int max_queue = 256;              // waiting jobs at which new calls are refused (busy)
  int max_groups = 4096;            // open groups at which new groups are refused (busy)
  std::chrono::milliseconds group_ttl{std::chrono::minutes(30)};
  std::chrono::milliseconds compile_timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds exec_timeout{std::chrono::minutes(10)};
  // The prompt of an attempt's next turn in leap's template (policy/text/prompt.hpp), as text: the
  // task, then each earlier turn's code and feedback. Called on the actor's thread.
  std::function<std::string(const std::string& task, const std::vector<std::string>& codes,
                            const std::vector<std::string>& feedbacks)>
    render_prompt;
  // Verdicts by status, compile and run latencies, cache hits (may be null).
  std::shared_ptr<prom::registry> metrics;
};

// Declares the families the service records into `m` (leap_verdicts_total, ...).
void declare_service_metrics(prom::registry& m);

msg::env_service_actor spawn_env_service(caf::actor_system& sys, env_service_options opts,
                                         std::shared_ptr<const task_catalog> tasks,
                                         msg::compiler_pool_actor compilers,
                                         msg::executor_pool_actor executors);

} // namespace leap::actors
