// What every supervised pool is spawned with: its size, how often a job is retried after an
// infrastructure failure, and an optional observer of its jobs' life cycle (queued, started on
// a worker slot, finished, withdrawn), which `leap bench` uses for its traces. No CAF here, so
// the spawn functions' headers stay light. Plain values; the observer is called on the pool's
// actor thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace leap::actors {

class pool_observer {
public:
  enum class event { queued, started, finished, withdrawn };
  virtual ~pool_observer() = default;
  virtual void on_job(event e, std::uint64_t id, std::uint32_t slot) = 0;
};

struct pool_options {
  std::size_t workers = 1;
  int retries = 1;                          // more tries after an infrastructure failure
  std::shared_ptr<pool_observer> observer;  // optional
};

} // namespace leap::actors
