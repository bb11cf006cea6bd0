// Runs a built candidate and its task's reference as separate worker processes (never inside
// leap): same job (seed, size sets, trials) for both, candidate first, each in its own empty
// temporary directory with a wall-clock timeout, resource limits and a clean environment; then
// compares the raw outputs in leap's process and assembles the verdict and its feedback.
// start() may be called from any thread; `done` runs once on the process_runner's thread.
#pragma once

#include "common/result.hpp"
#include "env/backend.hpp"
#include "env/process.hpp"
#include "env/sandbox.hpp"
#include "env/task.hpp"
#include "env/verdict.hpp"

#include <functional>
#include <memory>
#include <string>

namespace leap::env {

struct executor_options {
  std::string work_dir;
  double timeout_seconds = 30;
  long long memory_limit_mb = 4096; // RLIMIT_AS on the CPU backend (CUDA maps huge VA ranges)
  int trials = 2;
  unsigned long long seed = 0;      // 0 = fresh per run
  std::size_t output_limit = 64 * 1024;
  int emu_threads = 2;
  int emu_stack_kb = 128;
  int cuda_device = 0;
  int warmup = 3;
  int timing_runs = 10;
  long long l2_flush_mb = 128;
  double max_plausible_speedup = 10;
  bool check_repeat = true;          // second identical call in the first trial
  bool sandbox = true;               // apply every protection in `caps`
  sandbox_capabilities caps;         // probed once at start (probe_sandbox)
};

struct run_request {
  env::backend backend = env::backend::cpu;
  std::string candidate_exe;
  std::string reference_exe;
  bool dump_inputs = false; // keep inputs.bin (for `leap tasks verify`)
};

struct run_result {
  verdict v;                  // st, errors, timing, run_seconds, diagnostics, feedback
  std::string kept_dir;       // with dump_inputs: the reference's directory (caller removes it)
  unsigned long long seed = 0;
};

class executor {
public:
  struct job;
  using handle = std::shared_ptr<job>;

  executor(executor_options opts, process_runner& runner);

  // An error (not a verdict) when leap itself fails: the reference crashed, a temp dir could not
  // be made. Candidate failures are verdicts.
  handle start(const task_spec& task, run_request req, std::function<void(result<run_result>)> done);
  void cancel(const handle& h);
  const executor_options& options() const { return opts_; }

private:
  // Untimed and timed calls of the timing loop on each backend (see executor.cpp).
  int warmup_calls(backend b) const;
  int timed_calls(backend b) const;

  void run_one(const handle& h, bool reference);
  void conclude(const handle& h);
  executor_options opts_;
  process_runner& runner_;
};

} // namespace leap::env
