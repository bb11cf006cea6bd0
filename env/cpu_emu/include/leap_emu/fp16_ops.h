// Arithmetic, comparisons and math of the emulation's 16-bit float types, written once for
// `__half` and `__nv_bfloat16` (and their pairs): generic templates over the type here, and
// LEAP_EMU_FP16_FAMILY, which the shim <cuda_fp16.h> / <cuda_bf16.h> expand once per type into
// CUDA's non-template names (__hadd, __hfma2, hexp, operators, atomicAdd, ...), so overload
// resolution and implicit conversions work as with nvcc. Results are those of sm_53+/sm_90
// native instructions: add, sub, mul and div computed in float and rounded once to nearest even
// (exact: float has more than twice the 16-bit formats' precision plus two bits), fma rounded
// once from the exact a*b+c, NaN results canonical (0x7FFF), subnormals kept. Pure functions
// (atomicAdd aside, which is atomic across the emulation's worker threads); any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "leap_emu/fp16_bits.h"

namespace leap_emu::fp {

template <class T>
struct fmt_of;  // specialised by the shim headers: the format (half_fmt, bf16_fmt) and raw form of a type
template <class T>
using fmt_t = typename fmt_of<T>::type;

template <class T>
inline std::uint16_t bits(const T& v) { return static_cast<typename fmt_of<T>::raw>(v).x; }
template <class T>
inline T make(std::uint16_t b) { return T(typename fmt_of<T>::raw{b}); }
template <class T>
inline float wide(T a) { return to_float<fmt_t<T>>(bits(a)); }
template <class T>
inline T narrow(float f, rnd r = rnd::rn) { return make<T>(from_float<fmt_t<T>>(f, r)); }
template <class T>
inline T narrow_d(double d, rnd r = rnd::rn) { return make<T>(from_double<fmt_t<T>>(d, r)); }
template <class T>
inline bool nan(T a) { return is_nan<fmt_t<T>>(bits(a)); }

template <class T> inline T add(T a, T b) { return narrow<T>(wide(a) + wide(b)); }
template <class T> inline T sub(T a, T b) { return narrow<T>(wide(a) - wide(b)); }
template <class T> inline T mul(T a, T b) { return narrow<T>(wide(a) * wide(b)); }
template <class T> inline T div(T a, T b) { return narrow<T>(wide(a) / wide(b)); }
template <class T> inline T fma(T a, T b, T c) { return make<T>(fma_bits<fmt_t<T>>(bits(a), bits(b), bits(c))); }
template <class T>
inline T one() {
  if constexpr (sizeof(T) == 2) {
    return narrow<T>(1.0f);
  } else {
    const auto h = one<decltype(T{}.x)>();
    return T(h, h);
  }
}
// neg and abs flip or clear the sign; a NaN comes out canonical (as measured on sm_90).
template <class T>
inline T neg(T a) { return nan(a) ? make<T>(canonical_nan) : make<T>(static_cast<std::uint16_t>(bits(a) ^ 0x8000u)); }
template <class T>
inline T abs(T a) { return nan(a) ? make<T>(canonical_nan) : make<T>(static_cast<std::uint16_t>(bits(a) & 0x7FFFu)); }
// .sat: clamp to [+0, 1], NaN to +0.
template <class T>
inline T sat(T r) {
  const float f = wide(r);
  if (!(f > 0.0f)) return make<T>(0);
  return f > 1.0f ? narrow<T>(1.0f) : r;
}
// .relu: negative results to +0, NaN stays (canonical) NaN.
template <class T>
inline T relu(T r) {
  if (nan(r)) return make<T>(canonical_nan);
  return wide(r) < 0.0f || bits(r) == 0x8000u ? make<T>(0) : r;
}
// max/min: a NaN operand gives the other one (both NaN: canonical NaN); -0 < +0.
template <class T>
inline T max(T a, T b) {
  if (nan(a)) return nan(b) ? make<T>(canonical_nan) : b;
  if (nan(b)) return a;
  const float x = wide(a), y = wide(b);
  if (x != y) return x > y ? a : b;
  return (bits(a) & 0x8000u) ? b : a;
}
template <class T>
inline T min(T a, T b) {
  if (nan(a)) return nan(b) ? make<T>(canonical_nan) : b;
  if (nan(b)) return a;
  const float x = wide(a), y = wide(b);
  if (x != y) return x < y ? a : b;
  return (bits(a) & 0x8000u) ? a : b;
}
template <class T> inline T max_nan(T a, T b) { return nan(a) || nan(b) ? make<T>(canonical_nan) : max(a, b); }
template <class T> inline T min_nan(T a, T b) { return nan(a) || nan(b) ? make<T>(canonical_nan) : min(a, b); }
template <class T>
inline int isinf(T a) {
  const std::uint16_t b = bits(a);
  return is_inf<fmt_t<T>>(b) ? ((b & 0x8000u) ? -1 : 1) : 0;
}
// Math functions: the correctly rounded result (computed in double, rounded once).
template <class T, class Fn>
inline T math(T a, Fn fn) { return narrow_d<T>(fn(static_cast<double>(wide(a)))); }

// Pairs: lane by lane.
template <class T2, class Fn>
inline T2 lanes(T2 a, Fn fn) { return T2(fn(a.x), fn(a.y)); }
template <class T2, class Fn>
inline T2 lanes(T2 a, T2 b, Fn fn) { return T2(fn(a.x, b.x), fn(a.y, b.y)); }
template <class T2, class Fn>
inline T2 lanes(T2 a, T2 b, T2 c, Fn fn) { return T2(fn(a.x, b.x, c.x), fn(a.y, b.y, c.y)); }

// atomicAdd on a 16-bit value (CAS on its 2 bytes) or a pair (CAS on 4 bytes, lanes rounded
// separately, as the vector atomic of sm_60+/sm_90 does).
template <class T>
inline T atomic_add(T* address, T v) {
  auto* p = reinterpret_cast<std::uint16_t*>(address);
  std::uint16_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(p, &old, bits(add(make<T>(old), v)), false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_RELAXED)) {
  }
  return make<T>(old);
}
template <class T2>
inline T2 atomic_add2(T2* address, T2 v) {
  auto* p = reinterpret_cast<std::uint32_t*>(address);
  std::uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    T2 cur, next;
    std::memcpy(&cur, &old, 4);
    next = T2(add(cur.x, v.x), add(cur.y, v.y));
    std::uint32_t want;
    std::memcpy(&want, &next, 4);
    if (__atomic_compare_exchange_n(p, &old, want, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return cur;
  }
}

}  // namespace leap_emu::fp

// One name of CUDA's, scalar and paired: NAME(T, T) and NAME2(T2, T2) through fp::FN.
#define LEAP_EMU_FP16_BIN(T, T2, NAME, NAME2, EXPR)                                               \
  inline T NAME(const T a, const T b) { namespace fp = ::leap_emu::fp; return EXPR; }             \
  inline T2 NAME2(const T2 a, const T2 b) { return ::leap_emu::fp::lanes(a, b, [](T x, T y) { return NAME(x, y); }); }
#define LEAP_EMU_FP16_CMP(T, T2, NAME, EXPR)                                                      \
  inline bool __h##NAME(const T a, const T b) { namespace fp = ::leap_emu::fp; const float x = fp::wide(a), y = fp::wide(b); return EXPR; } \
  inline T2 __h##NAME##2(const T2 a, const T2 b) {                                                \
    return T2(::leap_emu::fp::narrow<T>(__h##NAME(a.x, b.x) ? 1.0f : 0.0f), ::leap_emu::fp::narrow<T>(__h##NAME(a.y, b.y) ? 1.0f : 0.0f)); \
  }                                                                                               \
  inline bool __hb##NAME##2(const T2 a, const T2 b) { return __h##NAME(a.x, b.x) && __h##NAME(a.y, b.y); } \
  inline unsigned __h##NAME##2_mask(const T2 a, const T2 b) {                                     \
    return (__h##NAME(a.x, b.x) ? 0xFFFFu : 0u) | (__h##NAME(a.y, b.y) ? 0xFFFF0000u : 0u);      \
  }
#define LEAP_EMU_FP16_MATH(T, T2, NAME, EXPR)                                                     \
  inline T h##NAME(const T a) { return ::leap_emu::fp::math(a, [](double v) { return EXPR; }); }  \
  inline T2 h2##NAME(const T2 a) { return ::leap_emu::fp::lanes(a, [](T x) { return h##NAME(x); }); }

// Every same-named function and operator of the type T (pair T2).
#define LEAP_EMU_FP16_FAMILY(T, T2)                                                                \
  LEAP_EMU_FP16_BIN(T, T2, __hadd, __hadd2, fp::add(a, b))                                         \
  LEAP_EMU_FP16_BIN(T, T2, __hsub, __hsub2, fp::sub(a, b))                                         \
  LEAP_EMU_FP16_BIN(T, T2, __hmul, __hmul2, fp::mul(a, b))                                         \
  LEAP_EMU_FP16_BIN(T, T2, __hdiv, __h2div, fp::div(a, b))                                         \
  LEAP_EMU_FP16_BIN(T, T2, __hadd_rn, __hadd2_rn, fp::add(a, b))                                   \
  LEAP_EMU_FP16_BIN(T, T2, __hsub_rn, __hsub2_rn, fp::sub(a, b))                                   \
  LEAP_EMU_FP16_BIN(T, T2, __hmul_rn, __hmul2_rn, fp::mul(a, b))                                   \
  LEAP_EMU_FP16_BIN(T, T2, __hadd_sat, __hadd2_sat, fp::sat(fp::add(a, b)))                        \
  LEAP_EMU_FP16_BIN(T, T2, __hsub_sat, __hsub2_sat, fp::sat(fp::sub(a, b)))                        \
  LEAP_EMU_FP16_BIN(T, T2, __hmul_sat, __hmul2_sat, fp::sat(fp::mul(a, b)))                        \
  LEAP_EMU_FP16_BIN(T, T2, __hmax, __hmax2, fp::max(a, b))                                         \
  LEAP_EMU_FP16_BIN(T, T2, __hmin, __hmin2, fp::min(a, b))                                         \
  LEAP_EMU_FP16_BIN(T, T2, __hmax_nan, __hmax2_nan, fp::max_nan(a, b))                             \
  LEAP_EMU_FP16_BIN(T, T2, __hmin_nan, __hmin2_nan, fp::min_nan(a, b))                             \
  inline T __hfma(const T a, const T b, const T c) { return ::leap_emu::fp::fma(a, b, c); }        \
  inline T __hfma_sat(const T a, const T b, const T c) { return ::leap_emu::fp::sat(::leap_emu::fp::fma(a, b, c)); } \
  inline T __hfma_relu(const T a, const T b, const T c) { return ::leap_emu::fp::relu(::leap_emu::fp::fma(a, b, c)); } \
  inline T2 __hfma2(const T2 a, const T2 b, const T2 c) { return ::leap_emu::fp::lanes(a, b, c, [](T x, T y, T z) { return __hfma(x, y, z); }); } \
  inline T2 __hfma2_sat(const T2 a, const T2 b, const T2 c) { return ::leap_emu::fp::lanes(a, b, c, [](T x, T y, T z) { return __hfma_sat(x, y, z); }); } \
  inline T2 __hfma2_relu(const T2 a, const T2 b, const T2 c) { return ::leap_emu::fp::lanes(a, b, c, [](T x, T y, T z) { return __hfma_relu(x, y, z); }); } \
  /* complex a*b + c: re = fma(-a.y, b.y, fma(a.x, b.x, c.x)), im = fma(a.y, b.x, fma(a.x, b.y, c.y)) */ \
  inline T2 __hcmadd(const T2 a, const T2 b, const T2 c) {                                         \
    return T2(__hfma(::leap_emu::fp::neg(a.y), b.y, __hfma(a.x, b.x, c.x)), __hfma(a.y, b.x, __hfma(a.x, b.y, c.y))); \
  }                                                                                                \
  inline T __hneg(const T a) { return ::leap_emu::fp::neg(a); }                                    \
  inline T __habs(const T a) { return ::leap_emu::fp::abs(a); }                                    \
  inline T2 __hneg2(const T2 a) { return T2(__hneg(a.x), __hneg(a.y)); }                           \
  inline T2 __habs2(const T2 a) { return T2(__habs(a.x), __habs(a.y)); }                           \
  inline bool __hisnan(const T a) { return ::leap_emu::fp::nan(a); }                               \
  inline int __hisinf(const T a) { return ::leap_emu::fp::isinf(a); }                              \
  inline T2 __hisnan2(const T2 a) {                                                                \
    return T2(::leap_emu::fp::narrow<T>(__hisnan(a.x) ? 1.0f : 0.0f), ::leap_emu::fp::narrow<T>(__hisnan(a.y) ? 1.0f : 0.0f)); \
  }                                                                                                \
  LEAP_EMU_FP16_CMP(T, T2, eq, x == y)                                                             \
  LEAP_EMU_FP16_CMP(T, T2, ne, x < y || x > y)                                                     \
  LEAP_EMU_FP16_CMP(T, T2, lt, x < y)                                                              \
  LEAP_EMU_FP16_CMP(T, T2, le, x <= y)                                                             \
  LEAP_EMU_FP16_CMP(T, T2, gt, x > y)                                                              \
  LEAP_EMU_FP16_CMP(T, T2, ge, x >= y)                                                             \
  LEAP_EMU_FP16_CMP(T, T2, equ, !(x < y || x > y))                                                 \
  LEAP_EMU_FP16_CMP(T, T2, neu, !(x == y))                                                         \
  LEAP_EMU_FP16_CMP(T, T2, ltu, !(x >= y))                                                         \
  LEAP_EMU_FP16_CMP(T, T2, leu, !(x > y))                                                          \
  LEAP_EMU_FP16_CMP(T, T2, gtu, !(x <= y))                                                         \
  LEAP_EMU_FP16_CMP(T, T2, geu, !(x < y))                                                          \
  LEAP_EMU_FP16_MATH(T, T2, sqrt, std::sqrt(v))                                                    \
  LEAP_EMU_FP16_MATH(T, T2, rsqrt, 1.0 / std::sqrt(v))                                             \
  LEAP_EMU_FP16_MATH(T, T2, rcp, 1.0 / v)                                                          \
  LEAP_EMU_FP16_MATH(T, T2, exp, std::exp(v))                                                      \
  LEAP_EMU_FP16_MATH(T, T2, exp2, std::exp2(v))                                                    \
  LEAP_EMU_FP16_MATH(T, T2, exp10, std::pow(10.0, v))                                              \
  LEAP_EMU_FP16_MATH(T, T2, log, std::log(v))                                                      \
  LEAP_EMU_FP16_MATH(T, T2, log2, std::log2(v))                                                    \
  LEAP_EMU_FP16_MATH(T, T2, log10, std::log10(v))                                                  \
  LEAP_EMU_FP16_MATH(T, T2, sin, std::sin(v))                                                      \
  LEAP_EMU_FP16_MATH(T, T2, cos, std::cos(v))                                                      \
  LEAP_EMU_FP16_MATH(T, T2, tanh, std::tanh(v))                                                    \
  LEAP_EMU_FP16_MATH(T, T2, tanh_approx, std::tanh(v))                                             \
  LEAP_EMU_FP16_MATH(T, T2, ceil, std::ceil(v))                                                    \
  LEAP_EMU_FP16_MATH(T, T2, floor, std::floor(v))                                                  \
  LEAP_EMU_FP16_MATH(T, T2, trunc, std::trunc(v))                                                  \
  LEAP_EMU_FP16_MATH(T, T2, rint, std::nearbyint(v))                                               \
  inline T2 __lowhigh2highlow(const T2 a) { return T2(a.y, a.x); }                                 \
  inline float __low2float(const T2 a) { return ::leap_emu::fp::wide(a.x); }                       \
  inline float __high2float(const T2 a) { return ::leap_emu::fp::wide(a.y); }                      \
  inline T atomicAdd(T* address, const T v) { return ::leap_emu::fp::atomic_add(address, v); }     \
  inline T2 atomicAdd(T2* address, const T2 v) { return ::leap_emu::fp::atomic_add2(address, v); }

// The operators CUDA defines for a type, through its intrinsics (the shim headers leave them out
// under __CUDA_NO_HALF_OPERATORS__, __CUDA_NO_HALF2_OPERATORS__ and the BFLOAT16 ones).
#define LEAP_EMU_FP16_OPERATORS(T, ADD, SUB, MUL, DIV, NEG, EQ, NE, GT, LT, GE, LE)               \
  inline T operator+(const T& l, const T& r) { return ADD(l, r); }                                 \
  inline T operator-(const T& l, const T& r) { return SUB(l, r); }                                 \
  inline T operator*(const T& l, const T& r) { return MUL(l, r); }                                 \
  inline T operator/(const T& l, const T& r) { return DIV(l, r); }                                 \
  inline T& operator+=(T& l, const T& r) { return l = ADD(l, r); }                                 \
  inline T& operator-=(T& l, const T& r) { return l = SUB(l, r); }                                 \
  inline T& operator*=(T& l, const T& r) { return l = MUL(l, r); }                                 \
  inline T& operator/=(T& l, const T& r) { return l = DIV(l, r); }                                 \
  inline T& operator++(T& h) { return h = ADD(h, ::leap_emu::fp::one<T>()); }                      \
  inline T& operator--(T& h) { return h = SUB(h, ::leap_emu::fp::one<T>()); }                      \
  inline T operator++(T& h, int) { T old = h; h = ADD(h, ::leap_emu::fp::one<T>()); return old; }  \
  inline T operator--(T& h, int) { T old = h; h = SUB(h, ::leap_emu::fp::one<T>()); return old; }  \
  inline T operator+(const T& h) { return h; }                                                     \
  inline T operator-(const T& h) { return NEG(h); }                                                \
  inline bool operator==(const T& l, const T& r) { return EQ(l, r); }                              \
  inline bool operator!=(const T& l, const T& r) { return NE(l, r); }                              \
  inline bool operator>(const T& l, const T& r) { return GT(l, r); }                               \
  inline bool operator<(const T& l, const T& r) { return LT(l, r); }                               \
  inline bool operator>=(const T& l, const T& r) { return GE(l, r); }                              \
  inline bool operator<=(const T& l, const T& r) { return LE(l, r); }
