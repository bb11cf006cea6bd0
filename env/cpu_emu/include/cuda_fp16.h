// Shim <cuda_fp16.h> of leap's CUDA-on-CPU emulation: IEEE binary16 `__half` / `half` and the
// pair `__half2` / `half2`, with the raw forms, CUDA's conversions, intrinsics, math functions,
// operators, atomicAdd and CUDART_*_FP16 constants. Each value is 2 bytes of bits; results are a
// GPU's (see leap_emu/fp16_ops.h for the rounding rules). Warp shuffles of half and half2 go
// through the templates of leap_emu/sync.h. Included by emulated candidates (any thread).
#pragma once

#include <cuda_runtime.h>

#include "leap_emu/fp16_named.h"

#define __CUDA_FP16_TYPES_EXIST__

struct __half_raw {
  unsigned short x;
};
struct __attribute__((aligned(4))) __half2_raw {
  unsigned short x, y;
};

struct __half;
struct __nv_bfloat16;
namespace leap_emu::fp {
template <>
struct fmt_of<__half> {
  using type = half_fmt;
  using raw = __half_raw;
};
}  // namespace leap_emu::fp

struct __attribute__((aligned(2))) __half {
 protected:
  unsigned short __x;

 public:
  __half() = default;
  constexpr __half(const __half_raw& hr) : __x(hr.x) {}
  __half& operator=(const __half_raw& hr) { __x = hr.x; return *this; }
  volatile __half& operator=(const __half_raw& hr) volatile { __x = hr.x; return *this; }
  volatile __half& operator=(const volatile __half_raw& hr) volatile { __x = hr.x; return *this; }
  operator __half_raw() const { return __half_raw{__x}; }
  operator __half_raw() const volatile { return __half_raw{__x}; }
#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
  explicit __half(const __nv_bfloat16 f);  // defined by <cuda_bf16.h>
  LEAP_EMU_FP16_CONVERSION_MEMBERS(__half, ::leap_emu::fp::half_fmt)
#endif
};

struct __attribute__((aligned(4))) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
  __half2(const __half2_raw& r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  __half2& operator=(const __half2_raw& r) { return *this = __half2(r); }
  operator __half2_raw() const {
    return __half2_raw{static_cast<__half_raw>(x).x, static_cast<__half_raw>(y).x};
  }
};

typedef __half half;
typedef __half2 half2;

LEAP_EMU_FP16_FAMILY(__half, __half2)
LEAP_EMU_FP16_NAMED(__half, __half2, half, half2)
#if !defined(__CUDA_NO_HALF_OPERATORS__)
LEAP_EMU_FP16_OPERATORS(__half, __hadd, __hsub, __hmul, __hdiv, __hneg, __heq, __hneu, __hgt, __hlt, __hge, __hle)
#endif
#if !defined(__CUDA_NO_HALF2_OPERATORS__)
LEAP_EMU_FP16_OPERATORS(__half2, __hadd2, __hsub2, __hmul2, __h2div, __hneg2, __hbeq2, __hbneu2, __hbgt2, __hblt2,
                        __hbge2, __hble2)
#endif

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
