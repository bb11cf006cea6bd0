// The emulation's own C API for the harness that links a candidate with leap_emu_rt. Call from
// the host thread after solution() returned (any thread is safe).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// The first fatal emulation error of this process (barrier deadlock, invalid launch
// configuration, barrier on the plain-loop path, ...), or a null pointer if there was none.
const char* leap_emu_fatal_error(void);

// Number of kernel launches executed so far (including failed ones).
long leap_emu_launch_count(void);

// The first undefined behaviour the emulation saw that a GPU does not report either (a
// shuffle that read a lane outside its mask, an exited lane or one past the block), or a
// null pointer. The run goes on; the value such an operation returned is the caller's own.
const char* leap_emu_undefined_behaviour(void);

// Non-zero when a lane read through a volatile pointer after writing through one, with no
// __syncwarp/__syncthreads (or other warp operation) in between and other lanes of its warp
// live: legacy warp-synchronous code, which the emulation ran in lockstep.
int leap_emu_implicit_warp_sync(void);

#ifdef __cplusplus
}
#endif
