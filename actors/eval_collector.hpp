// `leap eval`'s end of the pipeline: takes finished groups in place of the judge (same typed
// interface) and keeps them; once `expected` groups have arrived it hands them all to `on_done`.
// No learner, no reward: evaluation only counts. Callbacks run on its actor thread. Spawned by
// the pipeline assembly.
#pragma once

#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <vector>

namespace leap::actors {

struct eval_collector_options {
  std::size_t expected = 0;
  std::function<void(const msg::group_result&)> on_group;          // optional: progress
  std::function<void(std::vector<msg::group_result>)> on_done;
};

msg::judge_actor spawn_eval_collector(caf::actor_system& sys, eval_collector_options opts);

} // namespace leap::actors
