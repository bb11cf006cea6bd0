#include "actors/stage_meter.hpp"

#include <algorithm>

namespace leap::actors {

namespace {
std::size_t index(stage s) { return static_cast<std::size_t>(s); }
} // namespace

stage_meter::stage_meter(int generators, int compilers, int executors, clock::time_point start)
    : workers_{std::max(1, generators), std::max(1, compilers), std::max(1, executors)},
      start_(start), mark_(start) {}

void stage_meter::account(clock::time_point now) {
  if (now <= mark_)
    return;
  double dt = std::chrono::duration<double>(now - mark_).count();
  mark_ = now;
  for (std::size_t s = 0; s < 3; ++s)
    busy_[s] += dt * std::min(in_flight_[s], workers_[s]) / workers_[s];
}

void stage_meter::enter(stage s, clock::time_point now) {
  account(now);
  ++in_flight_[index(s)];
}

void stage_meter::leave(stage s, clock::time_point now) {
  account(now);
  in_flight_[index(s)] = std::max(0, in_flight_[index(s)] - 1);
}

msg::stage_usage stage_meter::usage(clock::time_point now) {
  account(now);
  msg::stage_usage u;
  u.elapsed_seconds = std::chrono::duration<double>(mark_ - start_).count();
  u.generate = busy_[index(stage::generate)];
  u.compile = busy_[index(stage::compile)];
  u.execute = busy_[index(stage::execute)];
  return u;
}

} // namespace leap::actors
