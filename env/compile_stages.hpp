// Where a cold build's wall time went, stage by stage, to show which stage a build's cost is in:
// the compiler (env/compiler) fills one value per build, the verdict carries it, `leap check`
// prints it. Plain values and pure functions; any thread may call them.
//
// Stages: front_end = nvcc up to PTX (its host preprocessing, cudafe++ and cicc: the syntax
// truth for compile_error) plus nvcc's own overhead; device_compile = nvcc's ptxas and fatbinary;
// rewrite = the CPU emulation's in-process source rewrite; host_build = the g++ build of the
// rewritten source (CPU backend) or nvcc's host compile (CUDA backend); glue = the g++ build of
// the task's glue.cpp; link = the worker's link; other = the rest of the build's wall time
// (temporary directory, cache lookup and publish), so the stages add up to the build's seconds.
// nvcc's own split comes from its --time table; without one, all of nvcc counts as front_end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace leap::env {

enum class compile_stage : std::uint8_t {
  front_end, device_compile, rewrite, host_build, glue, link, other
};
constexpr std::size_t compile_stage_count = 7;

const char* to_string(compile_stage s);        // "front_end", "device_compile", ...
const char* display_name(compile_stage s);     // "front end", "device compile", ...

// Wall seconds per stage, indexed by compile_stage. Empty when no compiler ran: a cache hit, a
// guard rejection, a request that failed before its first step.
using compile_stage_seconds = std::vector<double>;

// nvcc's --time table (CSV, milliseconds per phase) split into stages: the seconds of the
// device-side phases (ptxas, fatbinary, nvlink) and of the host compile; the rest of the nvcc
// step's wall time is the front end. Unknown or unreadable rows are ignored.
struct nvcc_phase_split {
  double device_compile = 0;
  double host_build = 0;
  bool any = false;  // at least one phase row was read
};
nvcc_phase_split parse_nvcc_time_table(const std::string& csv);

// One line: "front end 0.31 s, device compile 0.06 s, ..., other 0.01 s"; stages of 0 s are left
// out, "none (cache hit)" / "none" when empty.
std::string describe_stages(const compile_stage_seconds& s, bool cached);

} // namespace leap::env
