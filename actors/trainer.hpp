// The trainer: draws tasks without replacement per epoch (a seeded shuffle per epoch), admits
// groups to the gatekeeper under the staleness bound (admitted groups <= (max_staleness +
// versions learned + 1) * B; sync mode: one step's B groups at a time, then a flush), keeps the
// step bookkeeping from the learner's reports (the learner writes the periodic checkpoints
// before reporting a step), asks the learner for a checkpoint at the last step (the step count,
// or the step whose report says the compile budget is spent) unless that step was just saved, on
// stop, and after a failed step (which ends the run with its error); each report also carries
// the step's stage utilisation and pool retries. Its callbacks run on its own actor thread.
// Spawned by the pipeline assembly.
#pragma once

#include "actors/task_progress.hpp"
#include "common/result.hpp"
#include "messages/interfaces.hpp"
#include "messages/modes.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace leap::actors {

// How a run ended.
struct run_end {
  enum class how { completed, interrupted, failed };
  how end = how::completed;
  std::string error; // failed: why
};

// A step's infrastructure figures besides its report: compile and execute tries the pools (or the
// cluster standing in for them) repeated after an infrastructure failure since the previous step.
struct step_infra {
  std::uint64_t compile_retried = 0, execute_retried = 0;
};

struct trainer_options {
  int batch_groups = 4;
  int steps = 20;                 // the step count to reach
  int max_staleness = 1;
  msg::train_mode mode = msg::train_mode::async;
  std::vector<std::string> tasks;
  std::uint64_t seed = 1;
  std::int64_t start_step = 0;
  task_progress progress;
  std::string checkpoint_dir;
  std::string extra_json;          // saved with every checkpoint (task list, seed)
  std::function<void(const msg::step_report&)> on_report;
  // Called just before on_report with the same step's infrastructure figures, when the pools
  // below are set (the assembly sets them to the pipeline's compile and execute stages).
  std::function<void(std::int64_t step, const step_infra&)> on_infra;
  msg::compiler_pool_actor compilers;
  msg::executor_pool_actor executors;
  // A checkpoint was written (or not: the error says why); `final` for the run's last one.
  std::function<void(const result<msg::checkpoint_saved>&, bool final)> on_saved;
  std::function<void(const run_end&)> on_done;
};

msg::trainer_actor spawn_trainer(caf::actor_system& sys, trainer_options opts,
                                 msg::gatekeeper_actor gatekeeper, msg::learner_actor learner);

} // namespace leap::actors
