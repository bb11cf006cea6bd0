// Shim <cuda_runtime.h> of leap's CUDA-on-CPU emulation. A candidate rewritten by
// leap::emu::rewrite_cuda_source() is compiled with g++ -I<this dir>; this header stands in for
// the CUDA runtime, device built-ins and intrinsics. Host API calls come from the thread running
// solution(); device functions run on the emulation's worker threads (see leap_emu/*.h).
#pragma once

#ifndef LEAP_EMU
#define LEAP_EMU 1
#endif

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "leap_emu/api.h"
#include "leap_emu/atomics.h"
#include "leap_emu/device_math.h"
#include "leap_emu/errors.h"
#include "leap_emu/launch.h"
#include "leap_emu/ptx.h"
#include "leap_emu/runtime_api.h"
#include "leap_emu/state.h"
#include "leap_emu/sync.h"
#include "leap_emu/types.h"
#include "leap_emu/volatile.h"

// Execution-space and storage qualifiers. __shared__ is also rewritten by the rewriter (this
// macro is the fallback); __noinline__ is rewritten there only (a macro would break
// __attribute__((__noinline__)) in system headers).
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline
#define __inline_hint__ inline
#define __shared__ static thread_local
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define CUDART_VERSION 13000
