// Benchmark harness: a pool's job trace, when each job was queued, started on which worker slot,
// finished, or withdrawn from the queue (cancelled before it started). It observes a supervised
// pool (actors/pool_options.hpp: pool_observer), so busy intervals per worker, utilisation and
// queueing delays come from the pools themselves. Thread-safe: the pool actor records, any thread
// may read a snapshot. No CAF here.
#pragma once

#include "actors/pool_options.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace leap::bench {

struct job_event {
  enum class kind : std::uint8_t { queued, started, finished, withdrawn };
  kind what = kind::queued;
  std::uint64_t id = 0;    // the request's job id
  std::uint32_t slot = 0;  // worker slot (started / finished only)
  double t = 0;            // seconds since the trace's epoch
};

class job_trace : public actors::pool_observer {
 public:
  // `epoch`: the common time origin of every pool traced in one run.
  job_trace(std::string pool, std::uint32_t workers, std::chrono::steady_clock::time_point epoch)
    : pool_(std::move(pool)), workers_(workers), epoch_(epoch) {}

  void record(job_event::kind what, std::uint64_t id, std::uint32_t slot = 0) {
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
    std::lock_guard<std::mutex> lk(mtx_);
    events_.push_back({what, id, slot, t});
  }
  void on_job(event e, std::uint64_t id, std::uint32_t slot) override {
    switch (e) {
      case event::queued: record(job_event::kind::queued, id); break;
      case event::started: record(job_event::kind::started, id, slot); break;
      case event::finished: record(job_event::kind::finished, id, slot); break;
      case event::withdrawn: record(job_event::kind::withdrawn, id); break;
    }
  }
  std::vector<job_event> events() const {
    std::lock_guard<std::mutex> lk(mtx_);
    return events_;
  }
  const std::string& pool() const { return pool_; }
  std::uint32_t workers() const { return workers_; }

 private:
  std::string pool_;
  std::uint32_t workers_;
  std::chrono::steady_clock::time_point epoch_;
  mutable std::mutex mtx_;
  std::vector<job_event> events_;
};

} // namespace leap::bench
