// How the CPU math libraries LibTorch loads should wait when idle, chosen through the environment
// before they load. Call prefer_quiet_thread_pools() on the main thread before any other thread
// exists (it calls setenv): the `leap` front end before it hands a verb to `leap-torch`, and
// `leap-torch` itself first thing in main (it re-executes itself when the call changed anything,
// since the libraries read these variables when they are loaded, before main runs).
#pragma once

namespace leap {

// The variables and the values leap prefers; a variable the user set is left as it is.
//  - OMP_WAIT_POLICY=PASSIVE: libgomp (LibTorch's OpenMP) otherwise lets idle threads spin and
//    yield; with the many small ops of a small policy that cost SFT a third of its throughput on
//    the 2-core reference machine (1725 vs 2664 tokens/s).
//  - OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS's own pthread pool (the GEMMs) otherwise keeps idle
//    threads calling sched_yield for 2^28 cycles after each call, on the cores LibTorch's OpenMP
//    threads and leap's candidate builds need; 4 (2^4 cycles, its minimum) lets them sleep at
//    once. Measured with `pretrain` of 60 quickstart steps, 3 runs each side by side: 31.5 s
//    instead of 34.6 s wall, system time 4.6 s instead of 12.8 s, the same losses.
struct preferred_env_var {
  const char* name;
  const char* value;
};
inline constexpr preferred_env_var preferred_thread_pool_env[] = {
  {"OMP_WAIT_POLICY", "PASSIVE"},
  {"OPENBLAS_THREAD_TIMEOUT", "4"},
};

// Sets each preferred variable that is unset. Returns true if it set any (then a process that has
// already loaded LibTorch must re-execute itself for them to take effect); false if the user had
// set them all or setenv failed.
bool prefer_quiet_thread_pools();

} // namespace leap
