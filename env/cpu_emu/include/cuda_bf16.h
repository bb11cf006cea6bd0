// Shim <cuda_bf16.h> of leap's CUDA-on-CPU emulation: `__nv_bfloat16` / `nv_bfloat16` (the top
// 16 bits of a float32, rounded to nearest even) and the pair `__nv_bfloat162` / `nv_bfloat162`,
// with the raw forms, CUDA's conversions, the same-named intrinsics, math functions and
// operators as half, atomicAdd and CUDART_*_BF16 constants. Like CUDA's, it includes
// <cuda_fp16.h> and adds the explicit conversions between the two types. Included by emulated
// candidates (any thread).
#pragma once

#include <cuda_fp16.h>

#define __CUDA_BF16_TYPES_EXIST__

struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __attribute__((aligned(4))) __nv_bfloat162_raw {
  unsigned short x, y;
};

namespace leap_emu::fp {
template <>
struct fmt_of<__nv_bfloat16> {
  using type = bf16_fmt;
  using raw = __nv_bfloat16_raw;
};
}  // namespace leap_emu::fp

struct __attribute__((aligned(2))) __nv_bfloat16 {
 protected:
  unsigned short __x;

 public:
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw& hr) : __x(hr.x) {}
  __nv_bfloat16& operator=(const __nv_bfloat16_raw& hr) { __x = hr.x; return *this; }
  volatile __nv_bfloat16& operator=(const __nv_bfloat16_raw& hr) volatile { __x = hr.x; return *this; }
  volatile __nv_bfloat16& operator=(const volatile __nv_bfloat16_raw& hr) volatile { __x = hr.x; return *this; }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
  operator __nv_bfloat16_raw() const volatile { return __nv_bfloat16_raw{__x}; }
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
  // half to bfloat16: the exact half value rounded to nearest even (cvt.rn.bf16.f16)
  explicit __nv_bfloat16(const __half f)
      : __x(::leap_emu::fp::from_float<::leap_emu::fp::bf16_fmt>(__half2float(f), ::leap_emu::fp::rnd::rn)) {}
  LEAP_EMU_FP16_CONVERSION_MEMBERS(__nv_bfloat16, ::leap_emu::fp::bf16_fmt)
#endif
};

struct __attribute__((aligned(4))) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
  __nv_bfloat162(const __nv_bfloat162_raw& r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
  __nv_bfloat162& operator=(const __nv_bfloat162_raw& r) { return *this = __nv_bfloat162(r); }
  operator __nv_bfloat162_raw() const {
    return __nv_bfloat162_raw{static_cast<__nv_bfloat16_raw>(x).x, static_cast<__nv_bfloat16_raw>(y).x};
  }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
// bfloat16 to half: the exact bfloat16 value rounded to nearest even (overflow to inf).
inline __half::__half(const __nv_bfloat16 f) : __x(::leap_emu::fp::from_float<::leap_emu::fp::half_fmt>(
                                                    ::leap_emu::fp::wide(f), ::leap_emu::fp::rnd::rn)) {}
#endif

LEAP_EMU_FP16_FAMILY(__nv_bfloat16, __nv_bfloat162)
LEAP_EMU_FP16_NAMED(__nv_bfloat16, __nv_bfloat162, bfloat16, bfloat162)
#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
LEAP_EMU_FP16_OPERATORS(__nv_bfloat16, __hadd, __hsub, __hmul, __hdiv, __hneg, __heq, __hneu, __hgt, __hlt, __hge, __hle)
#endif
#if !defined(__CUDA_NO_BFLOAT162_OPERATORS__)
LEAP_EMU_FP16_OPERATORS(__nv_bfloat162, __hadd2, __hsub2, __hmul2, __h2div, __hneg2, __hbeq2, __hbneu2, __hbgt2,
                        __hblt2, __hbge2, __hble2)
#endif

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
