// Bit-level arithmetic of the emulation's 16-bit floating-point types (IEEE binary16 `__half`
// and bfloat16 `__nv_bfloat16`), in plain integer code that does not depend on the host's
// floating-point environment: rounding of any finite binary value to either format in the four
// IEEE modes (subnormals kept, overflow to infinity or the largest finite value as the mode
// says), widening to float, saturating conversions to integers, and the exactly rounded
// fused multiply-add. Used by the shim <cuda_fp16.h> and <cuda_bf16.h>; pure functions, any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace leap_emu::fp {

enum class rnd { rn, rz, rd, ru };  // to nearest even, toward zero, down (to -inf), up (to +inf)

// The two formats: fraction bits and exponent bits (bias 2^(ebits-1) - 1).
struct half_fmt {
  static constexpr int mbits = 10, ebits = 5;
};
struct bf16_fmt {
  static constexpr int mbits = 7, ebits = 8;
};

// The canonical NaN a GPU writes for both formats (CUDART_NAN_FP16, CUDART_NAN_BF16).
constexpr std::uint16_t canonical_nan = 0x7FFF;

template <class F>
constexpr std::uint16_t inf_bits() {
  return static_cast<std::uint16_t>(((1u << F::ebits) - 1u) << F::mbits);
}
template <class F>
constexpr bool is_nan(std::uint16_t h) {
  return (h & 0x7FFFu) > inf_bits<F>();
}
template <class F>
constexpr bool is_inf(std::uint16_t h) {
  return (h & 0x7FFFu) == inf_bits<F>();
}

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Rounds (-1)^neg * m * 2^exp (m any 64-bit magnitude) to format F in mode r.
template <class F>
inline std::uint16_t round_bits(bool neg, std::uint64_t m, int exp, rnd r) {
  const std::uint16_t sign = neg ? 0x8000u : 0u;
  if (m == 0) return sign;
  constexpr int bias = (1 << (F::ebits - 1)) - 1;
  constexpr int emin = 1 - bias;  // exponent of the smallest normal number
  const int top = 63 - __builtin_clzll(m);
  const int e = top + exp;  // the value lies in [2^e, 2^(e+1))
  const int lsb = (e >= emin ? e : emin) - F::mbits;  // weight of the result's last bit
  const int s = lsb - exp;  // how many bits of m fall below that weight
  std::uint64_t q;
  bool above = false, tie = false, inexact = false;
  if (s <= 0) {
    q = m << -s;  // exact: at most mbits + 1 significant bits
  } else if (s > 64) {
    q = 0;
    inexact = true;  // m < 2^64 <= 2^(s-1): below half an ulp
  } else {
    const std::uint64_t rem = s == 64 ? m : m & ((std::uint64_t{1} << s) - 1);
    const std::uint64_t halfway = std::uint64_t{1} << (s - 1);
    q = s == 64 ? 0 : m >> s;
    inexact = rem != 0;
    above = rem > halfway;
    tie = rem == halfway;
  }
  bool up = false;
  switch (r) {
    case rnd::rn: up = above || (tie && (q & 1)); break;
    case rnd::rz: break;
    case rnd::ru: up = inexact && !neg; break;
    case rnd::rd: up = inexact && neg; break;
  }
  q += up;
  // Normal: the biased exponent field comes out of the carry of q's leading bit.
  const std::uint64_t mag = e >= emin ? (static_cast<std::uint64_t>(e - emin) << F::mbits) + q : q;
  if (mag >= inf_bits<F>()) {
    const bool away = r == rnd::rn || (r == rnd::ru && !neg) || (r == rnd::rd && neg);
    return static_cast<std::uint16_t>(sign | (away ? inf_bits<F>() : inf_bits<F>() - 1u));
  }
  return static_cast<std::uint16_t>(sign | mag);
}

template <class F>
inline std::uint16_t from_float(float f, rnd r) {
  const std::uint32_t u = float_bits(f);
  const bool neg = (u >> 31) != 0;
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return canonical_nan;
  if (a == 0x7F800000u) return static_cast<std::uint16_t>((neg ? 0x8000u : 0u) | inf_bits<F>());
  const int be = static_cast<int>(a >> 23);
  const std::uint64_t m = be == 0 ? (a & 0x7FFFFFu) : ((a & 0x7FFFFFu) | 0x800000u);
  return round_bits<F>(neg, m, (be == 0 ? 1 : be) - 150, r);
}

template <class F>
inline std::uint16_t from_double(double d, rnd r) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  const bool neg = (u >> 63) != 0;
  const std::uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  if (a > 0x7FF0000000000000ull) return canonical_nan;
  if (a == 0x7FF0000000000000ull) return static_cast<std::uint16_t>((neg ? 0x8000u : 0u) | inf_bits<F>());
  const int be = static_cast<int>(a >> 52);
  const std::uint64_t frac = a & 0xFFFFFFFFFFFFFull;
  const std::uint64_t m = be == 0 ? frac : (frac | (std::uint64_t{1} << 52));
  return round_bits<F>(neg, m, (be == 0 ? 1 : be) - 1075, r);
}

// Rounds the exact value s + err to nearest even, where s is a double and |err| <= ulp(s)/2
// (err from an error-free transformation): two guard bits below s's last bit say on which side
// of s the exact value lies, so no double rounding can happen.
template <class F>
inline std::uint16_t from_double_exact(double s, double err) {
  if (err == 0 || !std::isfinite(s)) return from_double<F>(s, rnd::rn);
  std::uint64_t u;
  std::memcpy(&u, &s, 8);
  const bool neg = (u >> 63) != 0;
  const std::uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  const int be = static_cast<int>(a >> 52);
  const std::uint64_t frac = a & 0xFFFFFFFFFFFFFull;
  std::uint64_t m = (be == 0 ? frac : (frac | (std::uint64_t{1} << 52))) << 2;
  m = ((err > 0) == !neg) ? m + 1 : m - 1;  // slightly away from zero, or toward it
  return round_bits<F>(neg, m, (be == 0 ? 1 : be) - 1077, rnd::rn);
}

template <class F>
inline float to_float(std::uint16_t h) {
  if constexpr (F::ebits == 8) {
    return bits_float(static_cast<std::uint32_t>(h) << 16);  // bfloat16 is float's top half
  } else {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t e = (h >> 10) & 0x1Fu, f = h & 0x3FFu;
    if (e == 0x1F) return bits_float(f == 0 ? (sign | 0x7F800000u) : 0x7FFFFFFFu);
    if (e != 0) return bits_float(sign | ((e + 112u) << 23) | (f << 13));
    if (f == 0) return bits_float(sign);
    const int top = 31 - __builtin_clz(f);  // subnormal f * 2^-24: normalise
    return bits_float(sign | (static_cast<std::uint32_t>(top + 103) << 23) | ((f << (23 - top)) & 0x7FFFFFu));
  }
}

// a*b + c rounded once (fma.rn): the product of two 16-bit values is exact in double, the sum's
// rounding error comes from TwoSum, and from_double_exact rounds the exact sum.
template <class F>
inline std::uint16_t fma_bits(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
  const double p = static_cast<double>(to_float<F>(a)) * static_cast<double>(to_float<F>(b));
  const double cc = to_float<F>(c);
  const double s = p + cc;
  if (std::isnan(s)) return canonical_nan;
  const double bv = s - p;
  const double err = (p - (s - bv)) + (cc - bv);
  return from_double_exact<F>(s, err);
}

// Float-to-integer conversions of a GPU (cvt.rni/rzi/rmi/rpi): round in the mode, saturate to
// the type's range; NaN gives 0, or 0x8000000000000000 for the 64-bit types (as on sm_90).
template <class I>
inline I to_int(float x, rnd r) {
  if (std::isnan(x)) return sizeof(I) == 8 ? static_cast<I>(std::uint64_t{1} << 63) : I{0};
  double v = x;
  switch (r) {
    case rnd::rn: v = std::nearbyint(v); break;  // the host's default mode: to nearest even
    case rnd::rz: v = std::trunc(v); break;
    case rnd::rd: v = std::floor(v); break;
    case rnd::ru: v = std::ceil(v); break;
  }
  const double lo = static_cast<double>(std::numeric_limits<I>::min());
  const double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// Integer-to-16-bit-float conversions in mode r.
template <class F, class I>
inline std::uint16_t from_int(I v, rnd r) {
  const bool neg = v < 0;
  std::uint64_t m = neg ? (std::uint64_t{0} - static_cast<std::uint64_t>(v)) : static_cast<std::uint64_t>(v);
  return round_bits<F>(neg, m, 0, r);
}

}  // namespace leap_emu::fp
