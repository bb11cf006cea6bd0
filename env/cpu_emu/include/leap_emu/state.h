// Per-OS-thread state of the emulation that device code reads: the current thread's and block's
// coordinates. Written by the runtime's workers (and fiber switches) only; read by kernel code
// running on that worker. Plain __thread PODs so access is a single %fs-relative load.
#pragma once

#include "leap_emu/types.h"

namespace leap_emu::detail {

extern __thread uint3 tl_thread_idx;
extern __thread uint3 tl_block_idx;
extern __thread dim3 tl_block_dim;
extern __thread dim3 tl_grid_dim;

}  // namespace leap_emu::detail

#define threadIdx (::leap_emu::detail::tl_thread_idx)
#define blockIdx (::leap_emu::detail::tl_block_idx)
#define blockDim (::leap_emu::detail::tl_block_dim)
#define gridDim (::leap_emu::detail::tl_grid_dim)
static constexpr int warpSize = 32;
