// The conversions and lane moves whose CUDA names spell the type (__float2half_rn,
// __bfloat162float, __halves2half2, __int2bfloat16_rz, __ushort_as_half, ...), written once:
// LEAP_EMU_FP16_NAMED(T, T2, half, half2) in the shim <cuda_fp16.h>, and with bfloat16,
// bfloat162 in <cuda_bf16.h>. Float, double and integer conversions round as the GPU's cvt
// does (to nearest even unless the suffix says otherwise; subnormals kept; out-of-range
// integers saturate, NaN gives 0). Pure functions; any thread.
#pragma once

#include "leap_emu/fp16_ops.h"

// ITYPE <-> T in the four rounding modes, with CUDA's short integer names (int, uint, ll, ...).
#define LEAP_EMU_FP16_INT_MODE(T, NAME, ITYPE, INAME, M)                                           \
  inline T __##INAME##2##NAME##_##M(const ITYPE i) {                                                \
    return ::leap_emu::fp::make<T>(::leap_emu::fp::from_int<::leap_emu::fp::fmt_t<T>>(i, ::leap_emu::fp::rnd::M)); \
  }                                                                                                 \
  inline ITYPE __##NAME##2##INAME##_##M(const T h) {                                                \
    return ::leap_emu::fp::to_int<ITYPE>(::leap_emu::fp::wide(h), ::leap_emu::fp::rnd::M);          \
  }
#define LEAP_EMU_FP16_INT(T, NAME, ITYPE, INAME)  \
  LEAP_EMU_FP16_INT_MODE(T, NAME, ITYPE, INAME, rn) \
  LEAP_EMU_FP16_INT_MODE(T, NAME, ITYPE, INAME, rz) \
  LEAP_EMU_FP16_INT_MODE(T, NAME, ITYPE, INAME, rd) \
  LEAP_EMU_FP16_INT_MODE(T, NAME, ITYPE, INAME, ru)

#define LEAP_EMU_FP16_NAMED(T, T2, NAME, NAME2)                                                    \
  inline T __float2##NAME(const float a) { return ::leap_emu::fp::narrow<T>(a); }                   \
  inline T __float2##NAME##_rn(const float a) { return ::leap_emu::fp::narrow<T>(a); }              \
  inline T __float2##NAME##_rz(const float a) { return ::leap_emu::fp::narrow<T>(a, ::leap_emu::fp::rnd::rz); } \
  inline T __float2##NAME##_rd(const float a) { return ::leap_emu::fp::narrow<T>(a, ::leap_emu::fp::rnd::rd); } \
  inline T __float2##NAME##_ru(const float a) { return ::leap_emu::fp::narrow<T>(a, ::leap_emu::fp::rnd::ru); } \
  inline T __double2##NAME(const double a) { return ::leap_emu::fp::narrow_d<T>(a); }               \
  inline float __##NAME##2float(const T a) { return ::leap_emu::fp::wide(a); }                      \
  inline T2 __float2##NAME2##_rn(const float a) { const T h = __float2##NAME##_rn(a); return T2(h, h); } \
  inline T2 __floats2##NAME2##_rn(const float a, const float b) { return T2(__float2##NAME##_rn(a), __float2##NAME##_rn(b)); } \
  inline T2 __float22##NAME2##_rn(const float2 a) { return T2(__float2##NAME##_rn(a.x), __float2##NAME##_rn(a.y)); } \
  inline float2 __##NAME2##2float2(const T2 a) { return make_float2(::leap_emu::fp::wide(a.x), ::leap_emu::fp::wide(a.y)); } \
  inline T __low2##NAME(const T2 a) { return a.x; }                                                 \
  inline T __high2##NAME(const T2 a) { return a.y; }                                                \
  inline T2 __low2##NAME2(const T2 a) { return T2(a.x, a.x); }                                      \
  inline T2 __high2##NAME2(const T2 a) { return T2(a.y, a.y); }                                     \
  inline T2 __lows2##NAME2(const T2 a, const T2 b) { return T2(a.x, b.x); }                         \
  inline T2 __highs2##NAME2(const T2 a, const T2 b) { return T2(a.y, b.y); }                        \
  inline T2 __halves2##NAME2(const T a, const T b) { return T2(a, b); }                             \
  inline T2 __##NAME##2##NAME2(const T a) { return T2(a, a); }                                      \
  inline T2 make_##NAME2(const T x, const T y) { return T2(x, y); }                                 \
  inline short __##NAME##_as_short(const T h) { return static_cast<short>(::leap_emu::fp::bits(h)); } \
  inline unsigned short __##NAME##_as_ushort(const T h) { return ::leap_emu::fp::bits(h); }         \
  inline T __short_as_##NAME(const short i) { return ::leap_emu::fp::make<T>(static_cast<unsigned short>(i)); } \
  inline T __ushort_as_##NAME(const unsigned short i) { return ::leap_emu::fp::make<T>(i); }        \
  LEAP_EMU_FP16_INT(T, NAME, int, int)                                                              \
  LEAP_EMU_FP16_INT(T, NAME, unsigned int, uint)                                                    \
  LEAP_EMU_FP16_INT(T, NAME, short, short)                                                          \
  LEAP_EMU_FP16_INT(T, NAME, unsigned short, ushort)                                                \
  LEAP_EMU_FP16_INT(T, NAME, long long, ll)                                                         \
  LEAP_EMU_FP16_INT(T, NAME, unsigned long long, ull)                                               \
  inline signed char __##NAME##2char_rz(const T h) {                                                \
    return ::leap_emu::fp::to_int<signed char>(::leap_emu::fp::wide(h), ::leap_emu::fp::rnd::rz);   \
  }                                                                                                 \
  inline unsigned char __##NAME##2uchar_rz(const T h) {                                             \
    return ::leap_emu::fp::to_int<unsigned char>(::leap_emu::fp::wide(h), ::leap_emu::fp::rnd::rz); \
  }

// The members CUDA gives both scalar types (unless __CUDA_NO_HALF_CONVERSIONS__ /
// __CUDA_NO_BFLOAT16_CONVERSIONS__): construction from float, double and integers (to nearest),
// conversion to float and, truncating and saturating, to every integer type; bool is "not zero".
#define LEAP_EMU_FP16_CONVERSION_MEMBERS(T, F)                                                     \
  T(const float f) : __x(::leap_emu::fp::from_float<F>(f, ::leap_emu::fp::rnd::rn)) {}             \
  T(const double f) : __x(::leap_emu::fp::from_double<F>(f, ::leap_emu::fp::rnd::rn)) {}           \
  operator float() const { return ::leap_emu::fp::to_float<F>(__x); }                              \
  T& operator=(const float f) { __x = ::leap_emu::fp::from_float<F>(f, ::leap_emu::fp::rnd::rn); return *this; } \
  T& operator=(const double f) { __x = ::leap_emu::fp::from_double<F>(f, ::leap_emu::fp::rnd::rn); return *this; } \
  T(const short v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}              \
  T(const unsigned short v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}     \
  T(const int v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}                \
  T(const unsigned int v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}       \
  T(const long v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}               \
  T(const unsigned long v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}      \
  T(const long long v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {}          \
  T(const unsigned long long v) : __x(::leap_emu::fp::from_int<F>(v, ::leap_emu::fp::rnd::rn)) {} \
  operator signed char() const { return to<signed char>(); }                                       \
  operator unsigned char() const { return to<unsigned char>(); }                                   \
  operator char() const { return to<char>(); }                                                     \
  operator short() const { return to<short>(); }                                                   \
  operator unsigned short() const { return to<unsigned short>(); }                                 \
  operator int() const { return to<int>(); }                                                       \
  operator unsigned int() const { return to<unsigned int>(); }                                     \
  operator long() const { return to<long>(); }                                                     \
  operator unsigned long() const { return to<unsigned long>(); }                                   \
  operator long long() const { return to<long long>(); }                                           \
  operator unsigned long long() const { return to<unsigned long long>(); }                         \
  T& operator=(const short v) { return *this = T(v); }                                             \
  T& operator=(const unsigned short v) { return *this = T(v); }                                    \
  T& operator=(const int v) { return *this = T(v); }                                               \
  T& operator=(const unsigned int v) { return *this = T(v); }                                      \
  T& operator=(const long long v) { return *this = T(v); }                                         \
  T& operator=(const unsigned long long v) { return *this = T(v); }                                \
  constexpr operator bool() const { return (__x & 0x7FFFu) != 0u; }                                \
                                                                                                    \
 private:                                                                                           \
  template <class I>                                                                                \
  I to() const { return ::leap_emu::fp::to_int<I>(::leap_emu::fp::to_float<F>(__x), ::leap_emu::fp::rnd::rz); } \
                                                                                                    \
 public:
