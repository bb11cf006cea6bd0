#include "actors/stage_barrier.hpp"

namespace leap::actors {

void stage_barrier::submit(stage s, std::function<void()> work) {
  if (!sync_) {
    work();
    return;
  }
  queued_[static_cast<std::size_t>(s)].push_back(std::move(work));
}

void stage_barrier::sent() {
  if (sync_)
    ++outstanding_;
}

void stage_barrier::replied() {
  if (!sync_)
    return;
  --outstanding_;
  drain();
}

void stage_barrier::arm() {
  if (!sync_)
    return;
  armed_ = true;
  drain();
}

// With nothing out, the earliest stage with queued work runs all of it: compilation before
// execution before the next generations.
void stage_barrier::drain() {
  if (!armed_)
    return;
  while (outstanding_ == 0) {
    bool ran = false;
    for (auto s : {stage::compile, stage::execute, stage::generate}) {
      auto& q = queued_[static_cast<std::size_t>(s)];
      if (q.empty())
        continue;
      auto work = std::move(q);
      q.clear();
      for (auto& w : work)
        w();
      ran = true;
      break;
    }
    if (!ran) {
      armed_ = false; // idle: the next step's groups wait for their flush
      return;
    }
  }
}

} // namespace leap::actors
