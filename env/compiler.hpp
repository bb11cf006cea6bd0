// Builds a candidate (or a task's reference) into a runnable worker executable: static guards,
// the real nvcc (the truth for compile_error), for the CPU backend the rewrite + g++ build
// against the CUDA-on-CPU runtime, and the link with the harness. Content-addressed on-disk
// cache keyed by source, task signature, flags, compiler versions and runtime digest; the task's
// glue object is compiled once per task and kept beside it (<cache_dir>/glue/, checksummed).
// Each build reports its wall seconds per stage (env/compile_stages.hpp).
// start() may be called from any thread; steps run as child processes on the process_runner
// and `done` is called once on the runner's thread. Holds no CAF: actors/compiler_pool wraps it.
#pragma once

#include "env/backend.hpp"
#include "env/build_cache.hpp"
#include "env/compile_stages.hpp"
#include "env/process.hpp"
#include "env/task.hpp"
#include "env/toolchain.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::env {

struct compiler_options {
  std::string cache_dir;  // builds live in <cache_dir>/builds/<key>/ (env/build_cache.hpp),
                          // glue objects in <cache_dir>/glue/
  std::uint64_t cache_max_bytes = 4096ull << 20;  // the build cache's bound; 0 = unbounded
  double cache_keep_recent_seconds = 600;         // builds used this recently are never evicted
  std::string work_dir;   // temporary directories are created here
  std::string arch = "sm_90";
  std::vector<std::string> nvcc_flags{"-O3", "-std=c++17"};
  std::vector<std::string> emu_flags{"-O2"};
  double timeout_seconds = 120;
  int max_diagnostic_lines = 12;
};

enum class build_status : std::uint8_t {
  ok,
  compile_error,         // nvcc rejected the source: the candidate's fault
  rejected,              // static guards: no entry point, forbidden library or call
  emulation_unsupported, // nvcc accepted it, the CPU emulation cannot build it: not its fault
  timeout,               // the compiler ran past compiler.timeout_seconds
  cancelled,
  internal_error         // leap's fault, never cached: a compiler stage killed by a signal,
                         // a tool that would not start, the cache could not be written
};
const char* to_string(build_status s);

// Where the build with content address `key` keeps its worker executable: the one layout of the
// build cache (<cache_dir>/builds/<key>/worker), shared by the compiler that writes it and the
// executor pools that find a build by its key.
std::string build_executable(const std::string& cache_dir, const std::string& key);

struct build_request {
  std::string source;
  env::backend backend = env::backend::cpu;
  bool reference = false;      // the task's own reference: no guards, named reference.cu
};

struct build_result {
  build_status st = build_status::internal_error;
  std::string executable;   // absolute path when ok
  std::string diagnostics;  // cleaned, trimmed compiler text or the guard's reason
  double seconds = 0;       // compile wall time (0 on a cache hit)
  bool cached = false;
  std::string key;          // content address
  std::string stage;        // which step failed: "guards", "nvcc", "rewrite", "g++", "link"
  // Wall seconds per stage of this build (env/compile_stages.hpp), adding up to `seconds`; also
  // filled up to the failing step of a failed build. Empty on a cache hit (nothing compiled) and
  // when no compiler ran (guards, setup).
  compile_stage_seconds stages;
};

// The CPU backend's child-process command lines, run in a build directory that holds
// <display_name> (the source plus its signature check), glue.cpp and, after the in-process
// rewrite, solution_emu.cpp. The compiler runs them in this order (nvcc, rewrite, emu_build,
// glue, link); bench/compile_bench.cpp times alternatives to them. Pure; any thread.
struct cpu_build_commands {
  std::vector<std::string> nvcc;      // the syntax truth for compile_error: nvcc -cubin
  std::vector<std::string> emu_build; // g++ -c solution_emu.cpp against the shim headers
  std::vector<std::string> glue;      // g++ -c glue.cpp
  std::vector<std::string> link;      // the worker executable
};
cpu_build_commands cpu_build_command_lines(const toolchain& tc, const compiler_options& opts,
                                           const std::string& display_name);
// Where nvcc writes its --time table in the build directory (env/compile_stages.hpp).
inline constexpr const char* nvcc_time_table_name = "nvcc_time.csv";

class compiler {
public:
  struct job;
  using handle = std::shared_ptr<job>;

  compiler(toolchain tc, compiler_options opts, process_runner& runner);

  handle start(const task_spec& task, build_request req, std::function<void(build_result)> done);
  // Kills the running step; `done` then reports build_status::cancelled.
  void cancel(const handle& h);

  std::string cache_key(const task_spec& task, const build_request& req) const;
  const toolchain& tools() const { return tc_; }
  const compiler_options& options() const { return opts_; }
  build_cache& cache() { return *cache_; }

private:
  // Takes the key's lock (or waits for it), then a cache hit or the build's steps.
  void begin(const handle& h);
  void prepare_steps(const handle& h);
  void next_step(const handle& h);
  void finish(const handle& h, build_result r);

  toolchain tc_;
  compiler_options opts_;
  process_runner& runner_;
  std::unique_ptr<build_cache> cache_;
  std::string flock_tool_; // the `flock` program that waits for a lock; empty: block instead
  std::atomic<bool> told_unverified_{false};
};

} // namespace leap::env
