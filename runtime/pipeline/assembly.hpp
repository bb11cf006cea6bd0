// The one assembly of LEAP's actors, used by `leap train`, `leap eval` and `leap bench`:
// spawn() builds the pipeline from a description of its stages on a fresh actor system, and
// wait() blocks until the run ends.
//
//   generator pool ─▶ gatekeeper (algo/rollout.hpp) ─▶ compiler pool ─▶ executor pool
//                         │ finished groups
//                         ▼
//   train:  judge ─▶ learner ─▶ trainer (admits groups; the learner publishes weights)
//   eval:   eval collector (every group admitted at once; no judge, no learner)
//
// Each stage is real (the generation engine's policy replicas, the pools over the services'
// compiler and executor, the GRPO learner) or, through `stage_spawners`, a stand-in behind the
// same typed interface (`leap bench`'s latency models, tests' doubles). Call from one non-actor
// thread (a command's main thread or a test); callbacks run on actor threads.
#pragma once

#include "common/passkey.hpp"
#include "actors/eval_collector.hpp"
#include "actors/gatekeeper.hpp"
#include "actors/learner.hpp"
#include "actors/pool_options.hpp"
#include "actors/trainer.hpp"
#include "algo/advantages.hpp"
#include "common/result.hpp"
#include "messages/interfaces.hpp"
#include "runtime/pipeline/env_pools.hpp"
#include "runtime/pipeline/services.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace leap::policy {
class generation_engine;
class policy_model;
} // namespace leap::policy

namespace leap::runtime {

// Stand-ins for stages: an empty function means the real stage.
struct stage_spawners {
  std::function<msg::generator_pool_actor(caf::actor_system&)> generators;
  std::function<msg::compiler_pool_actor(caf::actor_system&)> compilers;
  std::function<msg::executor_pool_actor(caf::actor_system&)> executors;
  std::function<msg::learner_actor(caf::actor_system&)> learner;
  // Optional: adds to the actor system's config before it starts (a stand-in that talks to
  // other processes loads the middleman). Stand-ins are spawned in the order above.
  std::function<void(caf::actor_system_config&)> configure;
  // Optional, with the real compile stage (no `compilers` stand-in): an actor in front of it
  // (the local pool or the cluster's), spawned over it (`leap bench` substitutes its bundled
  // candidates there, so they reach the nodes too).
  std::function<msg::compiler_pool_actor(caf::actor_system&, msg::compiler_pool_actor)>
    wrap_compilers;
};

// `leap train` and `leap bench`: the judge, the learner and the trainer that drives admission.
struct train_driver {
  actors::trainer_options trainer;
  algo::estimator_config estimator;
  std::shared_ptr<policy::policy_model> model; // the real learner's policy (no stand-in learner)
  actors::learner_options learner;
};

// `leap eval`: every group admitted at once, collected when all have finished.
struct eval_driver {
  std::vector<msg::group_start> groups;
  std::function<void(const msg::group_result&)> on_group; // optional: progress
};

struct pipeline_description {
  services* svc = nullptr; // the real compile and execute stages
  std::shared_ptr<const actors::task_catalog> tasks;
  actors::gatekeeper_options gatekeeper;
  actors::pool_options generators, compilers, executors; // sizes, retries, observers
  std::shared_ptr<policy::generation_engine> engine;      // the real generators
  std::string policy_checkpoint; // the engine's checkpoint: generating nodes start from it
  stage_spawners stand_ins;
  std::shared_ptr<cluster_board> board; // optional: the cluster's status as it runs
  std::optional<train_driver> train; // exactly one of train and eval
  std::optional<eval_driver> eval;
};

struct pipeline_outcome {
  actors::run_end end;
  std::vector<msg::group_result> groups; // eval: every finished group
  msg::pool_stats compiler_stats;        // at the end
  msg::stage_usage usage;                // the gatekeeper's, at the end
};

class pipeline {
public:
  // Spawns every actor. An error names what the description lacks.
  static result<std::unique_ptr<pipeline>> spawn(pipeline_description d);
  // Blocks until the run ends. When `*stop` turns true, a training run saves and ends
  // (interrupted); an evaluation ends at once.
  pipeline_outcome wait(const std::atomic<bool>* stop = nullptr);
  ~pipeline(); // shuts every actor down; returns once the actor system is gone

  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;

  struct impl;

  pipeline(passkey<pipeline>, std::unique_ptr<impl> i); // spawn() only

private:
  std::unique_ptr<impl> impl_;
};

} // namespace leap::runtime
