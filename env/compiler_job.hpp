// A build in progress (env/compiler.hpp), shared by the compiler's files: compiler.cpp (requests,
// the cache lookup under the key's lock, cancel, finish), compiler_steps.cpp (the steps a build
// runs, per backend) and compiler_run.cpp (running them one after another, their seconds per
// stage, a failed step's verdict). Internal: only env/compiler*.cpp include it. Cancelling and
// finishing once are process_job's (cancel() may come from any thread); the steps run one at a
// time on the process runner's thread.
#pragma once

#include "common/result.hpp"
#include "env/build_cache.hpp"
#include "env/compile_stages.hpp"
#include "env/compiler.hpp"
#include "env/process.hpp"
#include "env/process_job.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace leap::env {

namespace compiler_detail {

// One step of a build: a child process or an in-process function, the status it fails with and
// the stage its wall seconds count in.
struct step {
  std::string stage;
  build_status fail_status;
  std::vector<std::string> argv;          // a child process, or
  std::function<result<void>()> in_process; // an in-process step
  compile_stage timing = compile_stage::other; // where its wall seconds count
  std::string nvcc_time_table;            // nvcc's --time output (relative to the build dir)
};

// Added to compiler.nvcc_flags for the CPU backend's nvcc -cubin, whose cubin is thrown away:
// device code unoptimised (cicc and ptxas at -O0; ptxas still runs). Less CPU for that step
// (bench/compile_bench.cpp: device_O3 is the pipeline without them) with the same accept/reject
// and the same diagnostics on every bundled reference and candidate, the adversarial suite and
// the corpus. The CUDA backend builds with compiler.nvcc_flags alone. Part of the cache key.
extern const std::vector<std::string> cpu_syntax_check_flags;

} // namespace compiler_detail

struct compiler::job : process_job<build_result> {
  build_request req;
  task_spec task;
  std::string key, dir, display_name;
  std::vector<compiler_detail::step> steps;
  std::size_t next = 0;
  std::chrono::steady_clock::time_point t0;
  compile_stage_seconds stages;  // filled as the steps finish (on the runner's thread)
  std::optional<build_cache::key_lock> lock; // held from the lookup to the publish
};

} // namespace leap::env
