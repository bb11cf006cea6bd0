// The cancel-and-finish-once part of a job that runs child processes one after another on a
// process_runner (env/process.hpp): a compiler build (env/compiler_job.hpp) and an executor run
// (env/executor_job.hpp). cancel() may come from any thread; starts and take_done() come from
// the job's own flow (the caller's thread first, then the runner's callbacks). Internal: only
// env/compiler*.cpp and env/executor*.cpp include it (through the two job headers).
#pragma once

#include "env/process.hpp"

#include <functional>
#include <mutex>
#include <utility>

namespace leap::env {

template <class Result>
class process_job {
public:
  using completion = std::function<void(Result)>;

  // The callback that receives the job's one result; set before the job's first start.
  void set_done(completion done) { done_ = std::move(done); }

  // Marks the job cancelled and cancels the child now running, if any (its callback then runs
  // with cancelled = true). Later starts do not start anything.
  void cancel(process_runner& runner) {
    process_runner::handle cur;
    {
      std::lock_guard<std::mutex> lk(mtx_);
      cancelled_ = true;
      cur = current_;
    }
    runner.cancel(cur);
  }

  bool cancelled() const {
    std::lock_guard<std::mutex> lk(mtx_);
    return cancelled_;
  }

  // Starts `spec` as the job's current child, unless the job was cancelled: then nothing starts
  // and the result is false (the caller finishes the job as cancelled). The check and the start
  // are one step, so a cancel is never lost between them.
  bool start(process_runner& runner, process_spec spec, process_runner::callback on_exit) {
    std::lock_guard<std::mutex> lk(mtx_);  // start() never calls back inline
    if (cancelled_)
      return false;
    current_ = runner.start(std::move(spec), std::move(on_exit));
    return true;
  }

  // The completion callback, the first time it is asked for (the job is finished from then on);
  // an empty function every later time, so a result is delivered once.
  completion take_done() {
    std::lock_guard<std::mutex> lk(mtx_);
    if (finished_)
      return {};
    finished_ = true;
    return std::move(done_);
  }

private:
  mutable std::mutex mtx_;
  process_runner::handle current_;
  completion done_;
  bool cancelled_ = false;
  bool finished_ = false;
};

} // namespace leap::env
