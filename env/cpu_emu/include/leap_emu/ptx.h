// The inline PTX the emulation runs (the rewriter's ptx_rewrite.cpp turns asm statements into
// these calls) and the shared-window address conversions (__cvta_generic_to_shared and back).
// A shared-window address is 32 bits, as on a GPU: static __shared__ arrays (thread-local
// storage of the worker) are encoded relative to the worker's TLS block, the dynamic shared
// buffer with the top bit set. Callable from kernel code on a worker thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "leap_emu/sync.h"

namespace leap_emu::ptx {

std::uint32_t to_shared(const void* p);
void* from_shared(std::uint64_t shared_address);

// cp.async as PTX defines it: the source (cp_size bytes, of which src_size are read, the rest of
// the destination zero-filled) is read at issue, but the destination is written only when the
// issuing thread waits for the copy's group, so a read of the destination before the matching
// wait sees the old contents (a GPU does not guarantee the new ones). Copies belong to the
// thread that issued them; commit_group closes the open group (empty groups count), wait_group N
// completes every committed group but the N most recent, wait_all commits and completes all.
// Copies still pending when the thread exits or its block ends are dropped (the block's shared
// memory ends with it). `cache_global` is the .cg form (cp-size 16 only).
void cp_async(std::uint64_t dst_shared, const char* src, unsigned cp_size, unsigned src_size,
              bool cache_global = false);
void cp_async_commit();
void cp_async_wait_group(unsigned long long n);
void cp_async_wait_all();
// Any size up to 16 bytes, no alignment check: the chunks of cooperative_groups::memcpy_async.
void cp_async_chunk(char* dst, const char* src, unsigned bytes);
// Runtime only (the fiber scheduler, at the start of each block of `threads` threads): drops
// every pending copy of the worker's previous block.
void reset_async_copies(std::size_t threads);

template <class T>
inline const char* addr(T v) {
  if constexpr (std::is_pointer_v<T>) return (const char*)(v);
  else return reinterpret_cast<const char*>(static_cast<std::uintptr_t>(v));
}
template <class T>
inline std::uint64_t shared_addr(T v) {
  static_assert(std::is_integral_v<T>, "a .shared address operand must be an integer (use __cvta_generic_to_shared)");
  return static_cast<std::uint64_t>(v);
}
// The %lanemask_* special registers: lanes below / at or below / ... this lane's.
inline unsigned lanemask_eq() { return 1u << ::leap_emu::detail::lane_id(); }
inline unsigned lanemask_lt() { return lanemask_eq() - 1u; }
inline unsigned lanemask_le() { return lanemask_lt() | lanemask_eq(); }
inline unsigned lanemask_ge() { return ~lanemask_lt(); }
inline unsigned lanemask_gt() { return ~lanemask_le(); }

// A global-space address from a generic one (cvta.to.global is the identity here).
inline const char* global(const char* p) { return p; }

template <class T>
inline T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Writes a loaded value into an asm output operand: bit-for-bit between a float and an
// integer register of the same size (a .b32 load into "=f"), converted otherwise.
template <class D, class S>
inline void set(D& dst, S v) {
  if constexpr (sizeof(D) == sizeof(S) && std::is_floating_point_v<D> != std::is_floating_point_v<S>) {
    std::memcpy(&dst, &v, sizeof(D));
  } else {
    dst = static_cast<D>(v);
  }
}

}  // namespace leap_emu::ptx

inline std::size_t __cvta_generic_to_shared(const void* p) { return ::leap_emu::ptx::to_shared(p); }
inline void* __cvta_shared_to_generic(std::size_t a) { return ::leap_emu::ptx::from_shared(a); }
inline std::size_t __cvta_generic_to_global(const void* p) { return reinterpret_cast<std::size_t>(p); }
inline void* __cvta_global_to_generic(std::size_t a) { return reinterpret_cast<void*>(a); }
