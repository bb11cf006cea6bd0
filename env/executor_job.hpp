// A run in progress (env/executor.hpp), shared by the executor's files: executor.cpp (starting
// the candidate's and the reference's worker processes in their run directories, sandboxed,
// cancel) and executor_verdict.cpp (reading what the workers left and assembling the verdict).
// Internal: only env/executor*.cpp include it. Cancelling and finishing once are process_job's
// (cancel() may come from any thread); the rest is touched by one process callback at a time, on
// the process runner's thread.
#pragma once

#include "env/executor.hpp"
#include "env/process_job.hpp"

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace leap::env {

struct executor::job : process_job<result<run_result>> {
  task_spec task;
  run_request req;
  unsigned long long seed = 0;
  std::string job_text;
  std::string cand_dir, ref_dir;
  process_outcome cand, ref;
  std::chrono::steady_clock::time_point t0;
  int foreign_kills = 0; // candidate runs ended by a SIGKILL leap did not send
};

namespace executor_detail {

// What a worker wrote to its status file (env/harness/protocol.hpp): how far it got, its first
// failure, its timing, and what the CPU emulation noticed.
struct status_info {
  bool done = false;
  int cur_s = -1, cur_t = -1; // last trial begun
  bool failed = false;
  std::string fail_kind, fail_msg;
  int fail_s = -1, fail_t = -1;
  bool timed = false;
  double median_ms = 0;
  int trials_ok = 0;
  bool implicit_warp_sync = false; // the emulation ran volatile accesses of a warp in lockstep
  std::string undefined;           // the first undefined behaviour the emulation noted
};

status_info parse_status_file(const std::string& text);

// A SIGKILL leap did not send: not its timeout, not a cancel (the OOM killer, an operator; also
// the kernel at the CPU-time limit, which leap sets above the wall-clock limit).
bool killed_from_outside(const process_outcome& o);

// The task with its first size set only: what the repeated call and the timing loop run on.
task_spec first_size_set(const task_spec& task);

} // namespace executor_detail

} // namespace leap::env
