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

#ifdef __cplusplus
}
#endif
