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

// Non-zero when lanes of a warp accessed memory through volatile pointers and the emulation
// ran them in lockstep at those accesses (legacy warp-synchronous code without __syncwarp).
int leap_emu_implicit_warp_sync(void);

#ifdef __cplusplus
}
#endif
