// CUDA atomic functions for the emulation, on GCC __atomic builtins (blocks run concurrently on
// several OS threads). Callable from kernel code on any worker thread, and from host code.
#pragma once

#include <cstdint>
#include <cstring>

namespace leap_emu::detail {

template <class T, class U, class F>
inline T atomic_cas_loop(T* address, F update) {
  static_assert(sizeof(T) == sizeof(U), "bit view size");
  U* p = reinterpret_cast<U*>(address);
  U old_bits = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    T old_val;
    std::memcpy(&old_val, &old_bits, sizeof(T));
    T new_val = update(old_val);
    U new_bits;
    std::memcpy(&new_bits, &new_val, sizeof(T));
    if (__atomic_compare_exchange_n(p, &old_bits, new_bits, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return old_val;
  }
}

}  // namespace leap_emu::detail

#define LEAP_EMU_ATOMIC_INT_OPS(T)                                                                  \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }              \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }              \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }            \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }              \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }                \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }              \
  inline T atomicCAS(T* a, T expected, T desired) {                                                 \
    __atomic_compare_exchange_n(a, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
    return expected;                                                                                \
  }                                                                                                 \
  inline T atomicMin(T* a, T v) {                                                                   \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                   \
    while (v < old &&                                                                               \
           !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}  \
    return old;                                                                                     \
  }                                                                                                 \
  inline T atomicMax(T* a, T v) {                                                                   \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                   \
    while (v > old &&                                                                               \
           !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}  \
    return old;                                                                                     \
  }

LEAP_EMU_ATOMIC_INT_OPS(int)
LEAP_EMU_ATOMIC_INT_OPS(unsigned int)
LEAP_EMU_ATOMIC_INT_OPS(unsigned long long)
LEAP_EMU_ATOMIC_INT_OPS(long long)
#undef LEAP_EMU_ATOMIC_INT_OPS

inline unsigned short atomicCAS(unsigned short* a, unsigned short expected, unsigned short desired) {
  __atomic_compare_exchange_n(a, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}

inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
  return ::leap_emu::detail::atomic_cas_loop<unsigned int, unsigned int>(
      a, [limit](unsigned int old) { return old >= limit ? 0u : old + 1u; });
}
inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
  return ::leap_emu::detail::atomic_cas_loop<unsigned int, unsigned int>(
      a, [limit](unsigned int old) { return (old == 0u || old > limit) ? limit : old - 1u; });
}

inline float atomicAdd(float* a, float v) {
  return ::leap_emu::detail::atomic_cas_loop<float, std::uint32_t>(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
  return ::leap_emu::detail::atomic_cas_loop<double, std::uint64_t>(a, [v](double old) { return old + v; });
}
inline float atomicSub(float* a, float v) { return atomicAdd(a, -v); }
inline float atomicExch(float* a, float v) {
  return ::leap_emu::detail::atomic_cas_loop<float, std::uint32_t>(a, [v](float) { return v; });
}
inline float atomicMin(float* a, float v) {
  return ::leap_emu::detail::atomic_cas_loop<float, std::uint32_t>(a, [v](float old) { return v < old ? v : old; });
}
inline float atomicMax(float* a, float v) {
  return ::leap_emu::detail::atomic_cas_loop<float, std::uint32_t>(a, [v](float old) { return v > old ? v : old; });
}
inline double atomicMin(double* a, double v) {
  return ::leap_emu::detail::atomic_cas_loop<double, std::uint64_t>(a, [v](double old) { return v < old ? v : old; });
}
inline double atomicMax(double* a, double v) {
  return ::leap_emu::detail::atomic_cas_loop<double, std::uint64_t>(a, [v](double old) { return v > old ? v : old; });
}

// Scope variants (_block, _system) behave like the device-wide ones here.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
