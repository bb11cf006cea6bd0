// Shim <cooperative_groups/memcpy_async.h> of leap's CUDA-on-CPU emulation: the group-wide
// cooperative_groups::memcpy_async (bytes, or element counts whose smaller one is copied) and
// cg::wait / cg::wait_prior<N>. Each call is one batch of cp.async copies (leap_emu/ptx.h): the
// group's threads take the chunks in turn, commit them, and the destination keeps its old
// contents until a wait covers the batch; wait and wait_prior also sync the group, as in CUDA.
// Also included by the emulation's <cooperative_groups.h>. Called from kernel code in a launch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../cooperative_groups.h"
#include "../cuda_pipeline.h"

namespace cooperative_groups {
namespace details {

// This thread's chunks of a `bytes`-byte copy split among `size` threads: chunks of 16, 8 or 4
// bytes as the two addresses allow (1 otherwise), chunk k to rank k % size.
inline void memcpy_async_share(unsigned rank, unsigned size, void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const auto both = reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s);
  const std::size_t chunk = both % 16 == 0 ? 16 : both % 8 == 0 ? 8 : both % 4 == 0 ? 4 : 1;
  for (std::size_t at = std::size_t(rank) * chunk; at < bytes; at += std::size_t(size) * chunk) {
    const std::size_t n = bytes - at < chunk ? bytes - at : chunk;
    ::leap_emu::ptx::cp_async_chunk(d + at, s + at, static_cast<unsigned>(n));
  }
}

}  // namespace details

template <class Group, class T>
void memcpy_async(const Group& group, T* dst, const T* src, std::size_t bytes) {
  details::memcpy_async_share(group.thread_rank(), group.size(), dst, src, bytes);
  ::leap_emu::ptx::cp_async_commit();
}

template <class Group, class T>
void memcpy_async(const Group& group, T* dst, std::size_t dst_count, const T* src, std::size_t src_count) {
  const std::size_t n = dst_count < src_count ? dst_count : src_count;
  details::memcpy_async_share(group.thread_rank(), group.size(), dst, src, n * sizeof(T));
  ::leap_emu::ptx::cp_async_commit();
}

// Waits until at most Stage of this thread's latest batches are pending, then syncs the group.
template <unsigned Stage, class Group>
void wait_prior(const Group& group) {
  ::leap_emu::ptx::cp_async_wait_group(Stage);
  group.sync();
}

template <class Group>
void wait(const Group& group) {
  ::leap_emu::ptx::cp_async_wait_group(0);
  group.sync();
}

}  // namespace cooperative_groups
