// The learner's queue of scored groups, shared by the GRPO learner and the benchmark's
// latency-model learner: it hands out one step's batch of B groups at a time. In `admission`
// order a step trains on the B groups the trainer admitted for it (group ids first_id + k*B ..
// first_id + (k+1)*B - 1 for the k-th step of this run), whatever order they finish in, so each
// step's batch holds the tasks drawn for it and step metrics stay comparable; groups of later
// steps that finish first wait here. In `finish` order a step takes the first B groups that
// finished (no head-of-line wait; a step may hold two groups of one task from two epochs).
// Plain data, no CAF calls: used on the owning learner's thread only.
#pragma once

#include "messages/modes.hpp"
#include "messages/train_messages.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

namespace leap::actors {

using msg::batch_order;

class batch_buffer {
public:
  // The trainer numbers the groups it admits from 1 in every run (a resumed run too).
  batch_buffer(int batch_groups, batch_order order, std::uint64_t first_id = 1);

  void push(msg::scored_group g);
  // The next step's B groups (in group-id order for `admission`), or nothing while some of them
  // are still out.
  std::optional<std::vector<msg::scored_group>> pop();
  // Groups held, including those of later steps.
  std::size_t size() const;

private:
  std::size_t batch_;
  batch_order order_;
  std::uint64_t next_id_;                              // admission: first id of the next step
  std::map<std::uint64_t, msg::scored_group> by_id_;   // admission
  std::deque<msg::scored_group> arrived_;              // finish
};

} // namespace leap::actors
