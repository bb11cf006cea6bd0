// The stage barriers of `train.mode = "sync"`: every stage's work over all groups in flight
// waits until the previous stage's requests have all been answered (generate all, compile all,
// execute all, then the next turn's generations), starting when the trainer has admitted a
// step's groups (arm()). In async mode submit() runs the work at once and the rest does nothing.
// Plain data, no CAF calls; used on the gatekeeper's actor thread only.
#pragma once

#include "actors/stage_meter.hpp"

#include <array>
#include <functional>
#include <vector>

namespace leap::actors {

class stage_barrier {
public:
  explicit stage_barrier(bool sync) : sync_(sync) {}

  // Work of stage s: run now (async), or when its stage's turn comes (sync).
  void submit(stage s, std::function<void()> work);
  // A request went out / its reply came back (sync: the next stage starts when none is out).
  void sent();
  void replied();
  // The step's groups are admitted: start draining the stages.
  void arm();
  bool sync() const { return sync_; }

private:
  void drain();
  bool sync_;
  bool armed_ = false;
  int outstanding_ = 0;
  std::array<std::vector<std::function<void()>>, 3> queued_;
};

} // namespace leap::actors
