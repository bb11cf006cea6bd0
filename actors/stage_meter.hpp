// Stage utilisation of the pipeline as the gatekeeper sees it: the jobs it has in flight per
// stage (generate, compile, execute), integrated over time and capped at each stage's workers,
// so busy worker-seconds / workers over an interval is that stage's utilisation. Plain data, no
// CAF calls; used on the gatekeeper's actor thread only.
#pragma once

#include "messages/train_messages.hpp"

#include <array>
#include <chrono>

namespace leap::actors {

enum class stage : std::uint8_t { generate, compile, execute };

class stage_meter {
public:
  using clock = std::chrono::steady_clock;
  stage_meter(int generators, int compilers, int executors, clock::time_point start = clock::now());

  void enter(stage s, clock::time_point now = clock::now()); // a job of stage s was sent
  void leave(stage s, clock::time_point now = clock::now()); // its reply came
  // Busy worker-seconds / workers of each stage since the start, and the seconds elapsed.
  msg::stage_usage usage(clock::time_point now = clock::now());

private:
  void account(clock::time_point now);
  std::array<int, 3> workers_;
  std::array<int, 3> in_flight_{0, 0, 0};
  std::array<double, 3> busy_{0, 0, 0};
  clock::time_point start_, mark_;
};

} // namespace leap::actors
