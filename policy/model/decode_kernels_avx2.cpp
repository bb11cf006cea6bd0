// The decode step's AVX2 + FMA loops (decode_kernels.hpp), for CPUs without AVX-512 (most
// laptops, AMD Zen 2/3). Compiled for the baseline ISA with per-function target attributes;
// called only where cpu_supports(decode_path::avx2).
#include "policy/model/decode_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace leap::policy {
namespace {

#define LEAP_AVX2 __attribute__((target("avx2,fma")))

// Lanes i < left of 8 (all for left >= 8, none for left <= 0): the mask of a row's or panel's
// last, partial vector, for masked loads and stores.
LEAP_AVX2 inline __m256i tail_mask(std::int64_t left) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// ---- small-M GEMM over packed panels --------------------------------------------------------
// One panel (four vectors of 8): y[0..MR, 0..cols) (+)= x[0..MR, 0..K) . panel[K, 32]. With 16
// vector registers MR = 3 rows (12 sums) share each load; the 8 rows of a block take three
// passes over the panel, the later two from L1/L2 (the weights come from memory once).
template <int MR>
LEAP_AVX2 void panel_avx2(const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                          std::int64_t ldy, std::int64_t cols, bool accumulate) {
  __m256 c[MR][4];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) c[r][v] = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < k; ++i) {
    const float* w = panel + i * panel_width;
    const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8), w2 = _mm256_loadu_ps(w + 16),
                 w3 = _mm256_loadu_ps(w + 24);
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m256 a = _mm256_broadcast_ss(x + r * ldx + i);
      c[r][0] = _mm256_fmadd_ps(a, w0, c[r][0]);
      c[r][1] = _mm256_fmadd_ps(a, w1, c[r][1]);
      c[r][2] = _mm256_fmadd_ps(a, w2, c[r][2]);
      c[r][3] = _mm256_fmadd_ps(a, w3, c[r][3]);
    }
  }
  // Every loop over the sums unrolled and no sum's address taken: the sums stay in registers
  // through the k loop (a sum written to a stack array here made GCC store all twelve to the
  // stack on every k).
  if (cols == panel_width) {
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        float* yv = y + r * ldy + 8 * v;
        _mm256_storeu_ps(yv, accumulate ? _mm256_add_ps(_mm256_loadu_ps(yv), c[r][v]) : c[r][v]);
      }
  } else {  // the last panel of a matrix whose N is not a multiple of 32: masked lanes
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      const __m256i m = tail_mask(cols - 8 * v);
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        float* yv = y + r * ldy + 8 * v;
        _mm256_maskstore_ps(yv, m, accumulate ? _mm256_add_ps(_mm256_maskload_ps(yv, m), c[r][v]) : c[r][v]);
      }
    }
  }
}

void panel_rows(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                std::int64_t ldy, std::int64_t cols, bool accumulate) {
  for (; mr >= 3; mr -= 3, x += 3 * ldx, y += 3 * ldy) panel_avx2<3>(x, ldx, k, panel, y, ldy, cols, accumulate);
  if (mr == 2) panel_avx2<2>(x, ldx, k, panel, y, ldy, cols, accumulate);
  if (mr == 1) panel_avx2<1>(x, ldx, k, panel, y, ldy, cols, accumulate);
}

// ---- attention over the keys of one KV head -------------------------------------------------
// Sums of each of 8 vectors, in one vector (lane i = sum of v[i]).
LEAP_AVX2 inline __m256 sum8(const __m256* v) {
  const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
  // u0 lane i < 4: v[i]'s lanes 0-3 summed, lane 4 + i: its lanes 4-7; u1 the same for v[4..7].
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

LEAP_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// Keys in blocks of 8 that stay in L1 while every query uses them (a shared prefix is read from
// memory once per step, not once per row); NC = Dh / 8 vectors per key.
template <int NC>
LEAP_AVX2 void scores_avx2(const float* const* q, float* const* out, int nq, const float* keys, std::int64_t s,
                           float scale) {
  constexpr int dh = NC * 8;
  const __m256 sv = _mm256_set1_ps(scale);
  std::int64_t t = 0;
  for (; t + 8 <= s; t += 8)
    for (int j = 0; j < nq; ++j) {
      const float* qj = q[j];
      __m256 acc[8];
#pragma GCC unroll 8
      for (int u = 0; u < 8; ++u) {
        const float* k = keys + (t + u) * dh;
        acc[u] = _mm256_mul_ps(_mm256_loadu_ps(qj), _mm256_loadu_ps(k));
#pragma GCC unroll 16
        for (int c = 1; c < NC; ++c) acc[u] = _mm256_fmadd_ps(_mm256_loadu_ps(qj + c * 8), _mm256_loadu_ps(k + c * 8), acc[u]);
      }
      _mm256_storeu_ps(out[j] + t, _mm256_mul_ps(sum8(acc), sv));
    }
  for (; t < s; ++t)
    for (int j = 0; j < nq; ++j) {
      const float* k = keys + t * dh;
      __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(q[j]), _mm256_loadu_ps(k));
      for (int c = 1; c < NC; ++c) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q[j] + c * 8), _mm256_loadu_ps(k + c * 8), acc);
      out[j][t] = hsum(acc) * scale;
    }
}

// One query's output over s keys: U keys at a time into independent sums, U * NC <= 8 registers.
template <int NC>
LEAP_AVX2 void head_values_avx2(const float* p, const float* vals, std::int64_t s, float* out, bool accumulate) {
  constexpr int dh = NC * 8;
  constexpr int U = NC >= 8 ? 1 : 8 / NC;
  // Index loops, all unrolled, so that the sums stay in registers (see panel_avx2).
  __m256 acc[U][NC];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u)
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) acc[u][c] = _mm256_setzero_ps();
  if (accumulate) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) acc[0][c] = _mm256_loadu_ps(out + c * 8);
  }
  std::int64_t t = 0;
  for (; t + U <= s; t += U)
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) {
      const __m256 pv = _mm256_broadcast_ss(p + t + u);
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c)
        acc[u][c] = _mm256_fmadd_ps(pv, _mm256_loadu_ps(vals + (t + u) * dh + c * 8), acc[u][c]);
    }
  for (; t < s; ++t) {
    const __m256 pv = _mm256_broadcast_ss(p + t);
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) acc[0][c] = _mm256_fmadd_ps(pv, _mm256_loadu_ps(vals + t * dh + c * 8), acc[0][c]);
  }
#pragma GCC unroll 16
  for (int c = 0; c < NC; ++c) {
    __m256 sum = acc[0][c];
#pragma GCC unroll 8
    for (int u = 1; u < U; ++u) sum = _mm256_add_ps(sum, acc[u][c]);
    _mm256_storeu_ps(out + c * 8, sum);
  }
}

template <int NC>
void values_avx2(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s, bool accumulate) {
  constexpr std::int64_t block = 64;  // keys: 8 KB of values at Dh = 32
  for (std::int64_t t = 0; t < s; t += block) {
    const auto n = std::min(block, s - t);
    for (int j = 0; j < nq; ++j) head_values_avx2<NC>(p[j] + t, vals + t * NC * 8, n, out[j], accumulate || t > 0);
  }
}

bool scores(const float* const* q, float* const* out, int nq, const float* keys, std::int64_t s, std::int64_t dh,
            float scale) {
  switch (dh) {
    case 16: scores_avx2<2>(q, out, nq, keys, s, scale); return true;
    case 32: scores_avx2<4>(q, out, nq, keys, s, scale); return true;
    case 48: scores_avx2<6>(q, out, nq, keys, s, scale); return true;
    case 64: scores_avx2<8>(q, out, nq, keys, s, scale); return true;
    case 128: scores_avx2<16>(q, out, nq, keys, s, scale); return true;
    default: return false;
  }
}

bool values(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s, std::int64_t dh,
            bool accumulate) {
  switch (dh) {
    case 16: values_avx2<2>(p, out, nq, vals, s, accumulate); return true;
    case 32: values_avx2<4>(p, out, nq, vals, s, accumulate); return true;
    case 48: values_avx2<6>(p, out, nq, vals, s, accumulate); return true;
    case 64: values_avx2<8>(p, out, nq, vals, s, accumulate); return true;
    case 128: values_avx2<16>(p, out, nq, vals, s, accumulate); return true;
    default: return false;
  }
}

// ---- softmax and SwiGLU ------------------------------------------------------------------------
// exp(x) for 8 floats, within 2 ulp of expf: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two
// so that n ln2 is exact), exp(r) by its degree-6 Taylor-like polynomial (Cephes' expf
// coefficients), times 2^n built in the exponent bits. Below -87.3 (where expf leaves the normal
// range) it gives 0, as the masked scores (lowest()) need; above 88.7 it saturates at 88.7's.
LEAP_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.72283f);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  // A NaN stays NaN (min/max below would turn it into a bound), so that a NaN score poisons its
  // softmax row as in torch::softmax instead of vanishing.
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 x_in = x;
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n: n + 127 in the exponent field. n is in [-126, 128]; 2^128 overflows, so split it as
  // 2^(n - 1) * 2 there (only 88.7 rounds to n = 128).
  const __m256i e = _mm256_cvtps_epi32(n);
  const __m256i big = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(127));
  const __m256i e1 = _mm256_sub_epi32(e, _mm256_and_si256(big, _mm256_set1_epi32(1)));
  const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e1, _mm256_set1_epi32(127)), 23));
  p = _mm256_mul_ps(p, scale);
  p = _mm256_blendv_ps(p, _mm256_add_ps(p, p), _mm256_castsi256_ps(big));
  return _mm256_blendv_ps(_mm256_andnot_ps(under, p), x_in, nan);
}

LEAP_AVX2 void softmax_rows_impl(float* x, std::int64_t rows, std::int64_t n) {
  const std::int64_t body = n & ~std::int64_t{7};
  const __m256i tail = tail_mask(n - body);
  const __m256 lowest = _mm256_set1_ps(std::numeric_limits<float>::lowest());
  for (std::int64_t r = 0; r < rows; ++r, x += n) {
    __m256 top = lowest;
    for (std::int64_t i = 0; i < body; i += 8) top = _mm256_max_ps(top, _mm256_loadu_ps(x + i));
    if (body < n) top = _mm256_max_ps(top, _mm256_blendv_ps(lowest, _mm256_maskload_ps(x + body, tail), _mm256_castsi256_ps(tail)));
    __m256 m = _mm256_max_ps(top, _mm256_permute2f128_ps(top, top, 1));
    m = _mm256_max_ps(m, _mm256_permute_ps(m, 0x4E));
    m = _mm256_max_ps(m, _mm256_permute_ps(m, 0xB1));  // every lane: the row's maximum
    __m256 sum = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < body; i += 8) {
      const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
      _mm256_storeu_ps(x + i, e);
      sum = _mm256_add_ps(sum, e);
    }
    if (body < n) {
      const __m256 e = _mm256_and_ps(exp8(_mm256_sub_ps(_mm256_maskload_ps(x + body, tail), m)), _mm256_castsi256_ps(tail));
      _mm256_maskstore_ps(x + body, tail, e);
      sum = _mm256_add_ps(sum, e);
    }
    const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
    for (std::int64_t i = 0; i < body; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    if (body < n) _mm256_maskstore_ps(x + body, tail, _mm256_mul_ps(_mm256_maskload_ps(x + body, tail), inv));
  }
}

LEAP_AVX2 inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), g)))), u);
}

LEAP_AVX2 void silu_mul_impl(const float* gu, std::int64_t rows, std::int64_t f, float* out) {
  const std::int64_t body = f & ~std::int64_t{7};
  const __m256i tail = tail_mask(f - body);
  for (std::int64_t r = 0; r < rows; ++r, gu += 2 * f, out += f) {
    for (std::int64_t i = 0; i < body; i += 8)
      _mm256_storeu_ps(out + i, silu_mul8(_mm256_loadu_ps(gu + i), _mm256_loadu_ps(gu + f + i)));
    if (body < f)
      _mm256_maskstore_ps(out + body, tail,
                          silu_mul8(_mm256_maskload_ps(gu + body, tail), _mm256_maskload_ps(gu + f + body, tail)));
  }
}

// ---- multinomial_one ---------------------------------------------------------------------------
LEAP_AVX2 void temper(const std::uint32_t* in, std::uint32_t* out, std::int64_t n) {
  const __m256i b = _mm256_set1_epi32(static_cast<int>(0x9d2c5680u)), c = _mm256_set1_epi32(static_cast<int>(0xefc60000u));
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 11));
    y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 7), b));
    y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 15), c));
    y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 18));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), y);
  }
  if (i < n) portable_kernels.temper(in + i, out + i, n - i);
}

LEAP_AVX2 bool scan_row(const float* row, std::int64_t v, std::int64_t& first) {
  const __m256 zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  __m256 top = _mm256_set1_ps(-1.0f), good = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  std::int64_t i = 0;
  for (; i + 8 <= v; i += 8) {
    const __m256 x = _mm256_loadu_ps(row + i);
    good = _mm256_and_ps(good, _mm256_and_ps(_mm256_cmp_ps(x, zero, _CMP_GE_OQ), _mm256_cmp_ps(x, inf, _CMP_LT_OQ)));
    top = _mm256_max_ps(top, x);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, top);
  float best = *std::max_element(lanes, lanes + 8);
  bool ok = _mm256_movemask_ps(good) == 0xFF;
  for (; i < v; ++i) {
    ok = ok && std::isfinite(row[i]) && row[i] >= 0;
    best = std::max(best, row[i]);
  }
  first = 0;
  while (first < v && row[first] != best) ++first;
  return ok && first < v;
}

// Without AVX-512 DQ there is no 64-bit integer to double conversion: the 53-bit draw is
// hi21 * 2^32 + lo32, each half made exact by the 2^52 exponent trick, joined by one exact FMA.
LEAP_AVX2 void uniform(const std::uint32_t* bits, double* u, std::int64_t v) {
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);  // 2^52 as a double's bits
  const __m256d two52 = _mm256_set1_pd(4503599627370496.0), two32 = _mm256_set1_pd(4294967296.0);
  const __m256i hi_mask = _mm256_set1_epi64x((1LL << 21) - 1);
  const __m256d unit = _mm256_set1_pd(1.0 / static_cast<double>(std::uint64_t{1} << 53));
  std::int64_t i = 0;
  for (; i + 4 <= v; i += 4) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits + 2 * i));  // lo << 32 | hi
    const __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(x, hi_mask), magic)), two52);
    const __m256d lo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(x, 32), magic)), two52);
    _mm256_storeu_pd(u + i, _mm256_mul_pd(_mm256_fmadd_pd(hi, two32, lo), unit));
  }
  if (i < v) portable_kernels.uniform(bits + 2 * i, u + i, v - i);
}

LEAP_AVX2 unsigned candidates8(const float* p, const double* u, double best, double slack) {
  const __m256d sl = _mm256_set1_pd(slack), be = _mm256_set1_pd(best);
  const __m256d l0 = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(p)), sl);
  const __m256d l1 = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(p + 4)), sl);
  const __m256d r0 = _mm256_mul_pd(_mm256_loadu_pd(u), be), r1 = _mm256_mul_pd(_mm256_loadu_pd(u + 4), be);
  return static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(l0, r0, _CMP_NLT_UQ))) |
         static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(l1, r1, _CMP_NLT_UQ))) << 4;
}

#undef LEAP_AVX2

} // namespace

void softmax_rows_avx2(float* x, std::int64_t rows, std::int64_t n) { softmax_rows_impl(x, rows, n); }
void silu_mul_avx2(const float* gu, std::int64_t rows, std::int64_t f, float* out) { silu_mul_impl(gu, rows, f, out); }

const decode_kernels avx2_kernels{panel_rows, scores,   values,  softmax_rows_avx2, silu_mul_avx2,
                                  temper,     scan_row, uniform, candidates8};

} // namespace leap::policy
