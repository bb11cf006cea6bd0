// CUDA device math and integer intrinsics for the emulation: the float/double functions of
// <math.h> plus CUDA-only ones (rsqrtf, __expf, __fdividef, __saturatef, rounding variants,
// bit casts, __popc/__clz/__brev, __ldg, min/max overloads...). Pure functions, any thread.
#pragma once

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <math.h>

// ---- float / double functions CUDA has and <math.h> lacks --------------------------------
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float sinpif(float x) { return std::sin(static_cast<float>(M_PI) * x); }
inline float cospif(float x) { return std::cos(static_cast<float>(M_PI) * x); }
inline double sinpi(double x) { return std::sin(M_PI * x); }
inline double cospi(double x) { return std::cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline float normcdff(float x) { return 0.5f * std::erfc(-x * static_cast<float>(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x * M_SQRT1_2); }
inline float erfcxf(float x) { return std::exp(x * x) * std::erfc(x); }
inline double erfcx(double x) { return std::exp(x * x) * std::erfc(x); }
inline double erfinv(double y) {
  if (y <= -1.0) return -HUGE_VAL;
  if (y >= 1.0) return HUGE_VAL;
  // Giles' approximation followed by two Newton steps.
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w; x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w;
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w; x = 0.00573950773 + x * w; x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}
inline float erfinvf(float y) { return static_cast<float>(erfinv(y)); }
inline double erfcinv(double y) { return erfinv(1.0 - y); }
inline float erfcinvf(float y) { return static_cast<float>(erfinv(1.0 - static_cast<double>(y))); }
inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
inline float normcdfinvf(float p) { return static_cast<float>(normcdfinv(p)); }
inline float norm3df(float a, float b, float c) { return std::sqrt(a * a + b * b + c * c); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline float norm4df(float a, float b, float c, float d) { return std::sqrt(a * a + b * b + c * c + d * d); }
inline float rhypotf(float a, float b) { return 1.0f / std::hypot(a, b); }
inline float fdividef(float a, float b) { return a / b; }

// ---- fast-math intrinsics: full precision here -------------------------------------------
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x != x ? 0.0f : x)); }
inline float __tanhf(float x) { return std::tanh(x); }

// ---- rounding-mode variants: round-to-nearest semantics for all of them ----------------
#define LEAP_EMU_ROUNDED(SUFFIX)                                                             \
  inline float __fadd_##SUFFIX(float a, float b) { return a + b; }                           \
  inline float __fsub_##SUFFIX(float a, float b) { return a - b; }                           \
  inline float __fmul_##SUFFIX(float a, float b) { return a * b; }                           \
  inline float __fdiv_##SUFFIX(float a, float b) { return a / b; }                           \
  inline float __fmaf_##SUFFIX(float a, float b, float c) { return std::fma(a, b, c); }      \
  inline float __frcp_##SUFFIX(float a) { return 1.0f / a; }                                 \
  inline float __fsqrt_##SUFFIX(float a) { return std::sqrt(a); }                            \
  inline double __dadd_##SUFFIX(double a, double b) { return a + b; }                        \
  inline double __dsub_##SUFFIX(double a, double b) { return a - b; }                        \
  inline double __dmul_##SUFFIX(double a, double b) { return a * b; }                        \
  inline double __ddiv_##SUFFIX(double a, double b) { return a / b; }                        \
  inline double __fma_##SUFFIX(double a, double b, double c) { return std::fma(a, b, c); }   \
  inline double __drcp_##SUFFIX(double a) { return 1.0 / a; }                                \
  inline double __dsqrt_##SUFFIX(double a) { return std::sqrt(a); }
LEAP_EMU_ROUNDED(rn)
LEAP_EMU_ROUNDED(rz)
LEAP_EMU_ROUNDED(ru)
LEAP_EMU_ROUNDED(rd)
#undef LEAP_EMU_ROUNDED
inline float __frsqrt_rn(float a) { return 1.0f / std::sqrt(a); }

// ---- conversions ------------------------------------------------------------------------
#define LEAP_EMU_CONV(FROM, FNAME, TO, TNAME)                                                   \
  inline TO __##FNAME##2##TNAME##_rn(FROM x) { return static_cast<TO>(std::nearbyint(x)); }     \
  inline TO __##FNAME##2##TNAME##_rz(FROM x) { return static_cast<TO>(std::trunc(x)); }         \
  inline TO __##FNAME##2##TNAME##_ru(FROM x) { return static_cast<TO>(std::ceil(x)); }          \
  inline TO __##FNAME##2##TNAME##_rd(FROM x) { return static_cast<TO>(std::floor(x)); }
LEAP_EMU_CONV(float, float, int, int)
LEAP_EMU_CONV(float, float, unsigned int, uint)
LEAP_EMU_CONV(float, float, long long, ll)
LEAP_EMU_CONV(float, float, unsigned long long, ull)
LEAP_EMU_CONV(double, double, int, int)
LEAP_EMU_CONV(double, double, unsigned int, uint)
LEAP_EMU_CONV(double, double, long long, ll)
LEAP_EMU_CONV(double, double, unsigned long long, ull)
#undef LEAP_EMU_CONV
#define LEAP_EMU_TO_FP(FROM, FNAME, TO, TNAME)                                                   \
  inline TO __##FNAME##2##TNAME##_rn(FROM x) { return static_cast<TO>(x); }                      \
  inline TO __##FNAME##2##TNAME##_rz(FROM x) { return static_cast<TO>(x); }                      \
  inline TO __##FNAME##2##TNAME##_ru(FROM x) { return static_cast<TO>(x); }                      \
  inline TO __##FNAME##2##TNAME##_rd(FROM x) { return static_cast<TO>(x); }
LEAP_EMU_TO_FP(int, int, float, float)
LEAP_EMU_TO_FP(unsigned int, uint, float, float)
LEAP_EMU_TO_FP(long long, ll, float, float)
LEAP_EMU_TO_FP(unsigned long long, ull, float, float)
LEAP_EMU_TO_FP(long long, ll, double, double)
LEAP_EMU_TO_FP(unsigned long long, ull, double, double)
LEAP_EMU_TO_FP(double, double, float, float)
#undef LEAP_EMU_TO_FP
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned int x) { return x; }

template <class To, class From>
inline To leap_emu_bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit cast size");
  To t;
  std::memcpy(&t, &v, sizeof(To));
  return t;
}
inline float __int_as_float(int x) { return leap_emu_bit_cast<float>(x); }
inline int __float_as_int(float x) { return leap_emu_bit_cast<int>(x); }
inline float __uint_as_float(unsigned int x) { return leap_emu_bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return leap_emu_bit_cast<unsigned int>(x); }
inline double __longlong_as_double(long long x) { return leap_emu_bit_cast<double>(x); }
inline long long __double_as_longlong(double x) { return leap_emu_bit_cast<long long>(x); }
inline int __double2hiint(double x) { return static_cast<int>(leap_emu_bit_cast<unsigned long long>(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(leap_emu_bit_cast<unsigned long long>(x) & 0xffffffffull); }
inline double __hiloint2double(int hi, int lo) {
  return leap_emu_bit_cast<double>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                                   static_cast<unsigned>(lo));
}

// ---- integer intrinsics -----------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
inline int __mul24(int a, int b) { return static_cast<int>(static_cast<long long>((a << 8) >> 8) * ((b << 8) >> 8)); }
inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<__int128>(a) * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
inline unsigned int __uhadd(unsigned int a, unsigned int b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b) >> 1); }
inline unsigned int __urhadd(unsigned int a, unsigned int b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b + 1) >> 1); }
inline unsigned int __sad(int a, int b, unsigned int c) { return c + static_cast<unsigned>(a > b ? a - b : b - a); }
inline unsigned int __usad(unsigned int a, unsigned int b, unsigned int c) { return c + (a > b ? a - b : b - a); }
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (s & 31)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (s > 32 ? 32 : s)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (s & 31));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (s > 32 ? 32 : s));
}

// ---- min / max overloads of CUDA's math_functions --------------------------------------
#define LEAP_EMU_MINMAX(R, A, B)                                                      \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
LEAP_EMU_MINMAX(int, int, int)
LEAP_EMU_MINMAX(unsigned int, unsigned int, unsigned int)
LEAP_EMU_MINMAX(unsigned int, int, unsigned int)
LEAP_EMU_MINMAX(unsigned int, unsigned int, int)
LEAP_EMU_MINMAX(long, long, long)
LEAP_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
LEAP_EMU_MINMAX(unsigned long, long, unsigned long)
LEAP_EMU_MINMAX(unsigned long, unsigned long, long)
LEAP_EMU_MINMAX(long long, long long, long long)
LEAP_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
LEAP_EMU_MINMAX(unsigned long long, long long, unsigned long long)
LEAP_EMU_MINMAX(unsigned long long, unsigned long long, long long)
LEAP_EMU_MINMAX(float, float, float)
LEAP_EMU_MINMAX(double, double, double)
LEAP_EMU_MINMAX(double, float, double)
LEAP_EMU_MINMAX(double, double, float)
#undef LEAP_EMU_MINMAX

// ---- cached / streaming loads and stores: plain memory accesses ------------------------
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }

#if defined(__x86_64__) || defined(__i386__)
inline long long clock64() { return static_cast<long long>(__builtin_ia32_rdtsc()); }
#else
inline long long clock64() { return static_cast<long long>(std::clock()); }
#endif
