// The trainer: draws tasks without replacement per epoch (a seeded shuffle per epoch), admits
// groups to the gatekeeper under the staleness bound (admitted groups <= (max_staleness +
// versions learned + 1) * B; sync mode: one step's B groups at a time, then a flush), keeps
// the step bookkeeping from the learner's reports (the learner writes the periodic checkpoints
// before reporting a step), and asks the learner for a checkpoint at the last step unless that
// step was just saved, and on stop. Its callbacks run on its own actor thread.
#pragma once

#include "actors/task_progress.hpp"
#include "messages/train_messages.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace leap::actors {

struct trainer_options {
  int batch_groups = 4;
  int steps = 20;                 // the step count to reach
  int max_staleness = 1;
  bool sync = false;
  std::vector<std::string> tasks;
  std::uint64_t seed = 1;
  std::int64_t start_step = 0;
  task_progress progress;
  std::string checkpoint_dir;
  std::function<void(const msg::step_report&)> on_report;
  std::string extra_json;          // saved with every checkpoint (task list, seed)
  std::function<void(const std::string& checkpoint_error, bool final)> on_saved;
  std::function<void(const std::string& why)> on_done; // "" = all steps done
};

// Takes (report_atom, step_report) from the learner and (stop_atom) to save and stop early.
caf::actor spawn_trainer(caf::actor_system& sys, trainer_options opts, caf::actor gatekeeper,
                         caf::actor learner);

} // namespace leap::actors
