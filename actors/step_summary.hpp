// The bookkeeping half of a learner step, shared by the GRPO learner and the benchmark's
// latency-model learner: from the B scored groups of one step, the step report's Acc@k, turns
// per pass, activated groups and recovery (over the ranked attempts: algo/metrics.hpp), the
// attempt, compile, cancel, drop and unsupported counts, the (task, epoch, index) list and one
// summary per group (groups.jsonl), and the task progress it marks. Pure (no CAF calls); the
// learner's thread.
#pragma once

#include "actors/task_progress.hpp"
#include "messages/train_messages.hpp"

#include <cstddef>
#include <vector>

namespace leap::actors {

msg::step_report summarize_step(const std::vector<msg::scored_group>& groups,
                                task_progress& progress, std::size_t task_count);

// The groups.jsonl record of one scored group.
msg::group_summary summarize_group(const msg::scored_group& sg);

} // namespace leap::actors
