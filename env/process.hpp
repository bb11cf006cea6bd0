// Child processes for compilers and candidate workers, run asynchronously on one Boost.Asio
// thread owned by a process_runner. start() may be called from any thread (an actor's); the
// completion callback runs on the runner's thread exactly once, so callers hand the outcome back
// to their actor with a message. Every child gets its own session (process group), so a timeout
// or cancel kills the whole tree; resource limits are applied in the child before exec.
#pragma once

#include "env/sandbox.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::env {

struct process_spec {
  std::vector<std::string> argv;      // argv[0] is an absolute path or found on PATH
  std::string cwd;                    // empty = inherit
  bool clean_env = false;             // true: only `env` below; false: inherit plus `env`
  std::vector<std::string> env;       // "KEY=VALUE"
  double timeout_seconds = 60;        // wall clock; the process group is killed after it
  long long address_space_bytes = 0;  // RLIMIT_AS, 0 = unlimited
  long long cpu_seconds = 0;          // RLIMIT_CPU, 0 = unlimited
  long long file_size_bytes = 0;      // RLIMIT_FSIZE, 0 = unlimited
  long long open_files = 0;           // RLIMIT_NOFILE, 0 = unchanged
  bool no_core_dumps = true;          // RLIMIT_CORE = 0
  std::size_t output_limit = 64 * 1024; // bytes of stdout and of stderr kept (rest discarded)
  // Bytes received on one stream after which leap closes it, so a flooding child gets EPIPE or
  // SIGPIPE instead of keeping the reader busy (0 = read everything).
  std::size_t output_hard_limit = 0;
  // Applied in the child after the limits, before exec (candidate workers only).
  std::shared_ptr<const sandbox_plan> sandbox;
};

struct process_outcome {
  bool started = false;
  std::string start_error;  // why it could not start (not found, not executable, ...)
  bool timed_out = false;
  bool cancelled = false;
  bool signaled = false;    // ended by a signal (including our kill on timeout/cancel)
  int exit_code = -1;       // when it exited normally
  int term_signal = 0;
  std::string out, err;     // captured, capped at output_limit
  bool out_truncated = false, err_truncated = false;
  bool output_limit_exceeded = false; // a stream passed output_hard_limit and was closed
  double seconds = 0;

  bool success() const { return started && !timed_out && !cancelled && !signaled && exit_code == 0; }
  // "exit code 1", "killed by signal 11 (SIGSEGV: segmentation fault)", "timed out after 3.0 s", ...
  std::string describe() const;
};

class process_runner {
public:
  class running;  // opaque handle of one child
  using handle = std::shared_ptr<running>;
  using callback = std::function<void(process_outcome)>;

  process_runner();
  ~process_runner(); // shutdown()
  process_runner(const process_runner&) = delete;
  process_runner& operator=(const process_runner&) = delete;

  handle start(process_spec spec, callback done);
  // Kills the child's process group; its callback still runs once, with cancelled = true.
  void cancel(const handle& h);
  // Number of children started and not yet reported.
  std::size_t active() const;
  // Kills every child still running and lets their callbacks run (up to 5 s), then joins the
  // I/O thread. What those callbacks start meanwhile, or anyone starts later, is not launched:
  // it is reported cancelled (or, once the thread has ended, not at all). Owners of objects the
  // callbacks use (compiler, executor) call it before destroying them. Idempotent.
  void shutdown();

  struct impl;

private:
  std::unique_ptr<impl> impl_;
};

// Runs one process to completion on the calling thread (for CLI tools and tests; never from
// inside an actor's handler).
process_outcome run_blocking(process_spec spec);

std::string signal_description(int sig);

} // namespace leap::env
