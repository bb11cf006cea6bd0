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

namespace leap_emu::ptx {

std::uint32_t to_shared(const void* p);
void* from_shared(std::uint64_t shared_address);

// cp.async: the copy happens at once (commit/wait are no-ops; the data is there before any
// wait). src_size < cp_size fills the rest of the destination with zeros, as PTX specifies.
void cp_async(std::uint64_t dst_shared, const char* src, unsigned cp_size, unsigned src_size);

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
