// Internals shared by the leap_emu_rt sources (not for candidates): error recording, the
// execution mode of the current OS thread, and the fiber block scheduler's entry point.
// Error functions are thread-safe; the mode and scheduler state are per worker thread.
#pragma once

#include <string>

#include "leap_emu/errors.h"
#include "leap_emu/launch.h"

namespace leap_emu::detail {

// Sets the API's last error (returned and cleared by cudaGetLastError).
void set_last_error(cudaError_t e);
// Records a fatal emulation error: the first message is kept for leap_emu_fatal_error() and
// printed to stderr; `sticky` errors make every later API call fail like a corrupted context.
void record_fatal(cudaError_t e, const std::string& message, bool sticky);
// Records the first undefined-behaviour note (leap_emu_undefined_behaviour); not an error.
void record_undefined(const std::string& message);
// Marks that volatile accesses ran in warp lockstep (leap_emu_implicit_warp_sync).
void record_implicit_warp_sync();
// The sticky error, or cudaSuccess.
cudaError_t sticky_error();
// Returns e after recording it as last error (when not success), or the sticky error.
cudaError_t api_return(cudaError_t e);
int env_int(const char* name, int fallback, int lo, int hi);
std::size_t max_dynamic_smem();

enum class exec_mode : int { host = 0, loop = 1, fibers = 2 };
extern __thread exec_mode tl_mode;
extern __thread const launch_desc* tl_desc;

// Thrown on the plain-loop path when a kernel reaches a barrier; caught by the launcher.
struct launch_abort {};

// Runs the current block (coordinates in the thread-local state) with one fiber per thread.
// Returns false, after recording a fatal error, when the block's threads got stuck.
bool run_block_fibers(const launch_desc& d);

std::string dim_string(const uint3& v);

// Installs (once) the SIGSEGV/SIGBUS reporter and this worker's alternate signal stack, and
// tells it where this worker's fiber stacks (slots of [guard page | stack]) lie.
void install_fault_handler(const void* stacks_lo, const void* stacks_hi, std::size_t slot, std::size_t page);

}  // namespace leap_emu::detail
