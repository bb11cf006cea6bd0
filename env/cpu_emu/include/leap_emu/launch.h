// Kernel launches of the emulation. The rewriter turns `K<<<cfg>>>(args)` into
//   ::leap_emu::launch_kernel("K", LEAP_EMU_TU_USES_SYNC, ::leap_emu::make_launch_config(cfg),
//                             [&](auto&... a) { K(a...); }, args)
// Called from host code (the thread running solution()); returns when the grid has finished
// (launches are synchronous, streams ignored). Errors land in cudaGetLastError and, for fatal
// ones, leap_emu_fatal_error().
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "leap_emu/errors.h"
#include "leap_emu/state.h"
#include "leap_emu/types.h"

namespace leap_emu {

struct launch_config {
  dim3 grid;
  dim3 block;
  std::size_t dynamic_smem = 0;
  cudaStream_t stream = nullptr;
};

inline launch_config make_launch_config(dim3 grid, dim3 block, std::size_t dynamic_smem = 0,
                                        cudaStream_t stream = nullptr) {
  return launch_config{grid, block, dynamic_smem, stream};
}

namespace detail {

struct launch_desc {
  const char* kernel_name = "";
  launch_config cfg;
  bool wants_fibers = true;
  const void* closure = nullptr;
  // Runs the current thread (coordinates already in the thread-local state).
  void (*run_thread)(const void* closure) = nullptr;
  // Runs every thread of the current block in a plain loop (no barriers allowed).
  void (*run_block_loop)(const void* closure) = nullptr;
};

void launch(const launch_desc& desc);
// Per-worker dynamic shared memory buffer (stable address for the worker's lifetime).
void* dynamic_smem();

template <class C>
void run_thread_of(const void* p) {
  const C& c = *static_cast<const C*>(p);
  std::apply(c.fn, c.args);
}

template <class C>
void run_block_loop_of(const void* p) {
  const C& c = *static_cast<const C*>(p);
  const unsigned bx = tl_block_dim.x, by = tl_block_dim.y, bz = tl_block_dim.z;
  for (unsigned z = 0; z < bz; ++z)
    for (unsigned y = 0; y < by; ++y)
      for (unsigned x = 0; x < bx; ++x) {
        tl_thread_idx = uint3{x, y, z};
        // Keep the store (not sunk past the loop) so crash reports name the right thread.
        __asm__ __volatile__("" : : "m"(tl_thread_idx));
        std::apply(c.fn, c.args);
      }
}

template <class F, class Tuple>
struct closure {
  F fn;
  Tuple args;
};

}  // namespace detail

template <class F, class... A>
void launch_kernel(const char* name, int tu_uses_sync, const launch_config& cfg, F&& fn, A&&... args) {
  using closure_t = detail::closure<std::decay_t<F>, std::tuple<std::decay_t<A>...>>;
  // Kernel arguments are evaluated and copied once, on the host, as in CUDA.
  const closure_t c{std::forward<F>(fn), std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)};
  detail::launch_desc d;
  d.kernel_name = name;
  d.cfg = cfg;
  d.wants_fibers = tu_uses_sync != 0;
  d.closure = &c;
  d.run_thread = &detail::run_thread_of<closure_t>;
  d.run_block_loop = &detail::run_block_loop_of<closure_t>;
  detail::launch(d);
}

}  // namespace leap_emu

#ifndef LEAP_EMU_TU_USES_SYNC
#define LEAP_EMU_TU_USES_SYNC 1
#endif
