// The decode step's AVX-512 loops (decode_kernels.hpp). Compiled for the baseline ISA with
// per-function target attributes; called only where cpu_supports(decode_path::avx512).
#include "policy/model/decode_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

// GCC 12 reports the deliberately undefined operands of some AVX-512 intrinsics (avx512fintrin.h's
// _mm512_undefined_ps / _pd) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace leap::policy {
namespace {

// ---- small-M GEMM over packed panels --------------------------------------------------------
// One panel: y[0..MR, 0..cols) (+)= x[0..MR, 0..K) . panel[K, 32] (two vectors). MR rows share
// every load of the panel, so a batch of up to 8 rows reads each weight once.
template <int MR>
__attribute__((target("avx512f"))) void panel_avx512(const float* x, std::int64_t ldx, std::int64_t k,
                                                     const float* panel, float* y, std::int64_t ldy,
                                                     std::int64_t cols, bool accumulate) {
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < k; ++i) {
    const __m512 w0 = _mm512_loadu_ps(panel + i * panel_width);
    const __m512 w1 = _mm512_loadu_ps(panel + i * panel_width + 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(x[r * ldx + i]);
      c0[r] = _mm512_fmadd_ps(a, w0, c0[r]);
      c1[r] = _mm512_fmadd_ps(a, w1, c1[r]);
    }
  }
  const __mmask16 m0 = cols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* yr = y + r * ldy;
    if (accumulate) {
      c0[r] = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, yr), c0[r]);
      c1[r] = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, yr + 16), c1[r]);
    }
    _mm512_mask_storeu_ps(yr, m0, c0[r]);
    _mm512_mask_storeu_ps(yr + 16, m1, c1[r]);
  }
}

void panel_rows(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                std::int64_t ldy, std::int64_t cols, bool accumulate) {
  switch (mr) {
    case 1: return panel_avx512<1>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 2: return panel_avx512<2>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 3: return panel_avx512<3>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 4: return panel_avx512<4>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 5: return panel_avx512<5>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 6: return panel_avx512<6>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 7: return panel_avx512<7>(x, ldx, k, panel, y, ldy, cols, accumulate);
    default: return panel_avx512<8>(x, ldx, k, panel, y, ldy, cols, accumulate);
  }
}

// ---- attention over the keys of one KV head -------------------------------------------------
// Sums of each of 16 vectors, in one vector (lane i = sum of v[i]): a transpose-and-add tree,
// about three instructions per vector instead of a full horizontal reduction each.
__attribute__((target("avx512f"), always_inline)) inline __m512 sum16(const __m512* v) {
  __m512 w[8], u[4], s[2];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i)  // quarters 0-1: sum of v[2i], 2-3: of v[2i+1]
    w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                         _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i)  // quarter k: sum of v[4i + k]
    u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * i], w[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(w[2 * i], w[2 * i + 1], 0xDD));
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i)  // quarter k, lanes 0-1: v[8i + k], lanes 2-3: v[8i + 4 + k]
    s[i] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0x44), _mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0xEE));
  // quarter k, lane m: v[4m + k]
  const __m512 z = _mm512_add_ps(_mm512_shuffle_ps(s[0], s[1], 0x88), _mm512_shuffle_ps(s[0], s[1], 0xDD));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, z);
}

// Keys are walked in blocks of 16 that stay in L1 while every query uses them: a shared prefix is
// read from memory once per step, not once per row.
template <int NC>
__attribute__((target("avx512f"))) void scores_avx512(const float* const* q, float* const* out, int nq,
                                                      const float* keys, std::int64_t s, float scale) {
  constexpr int dh = NC * 16;
  const __m512 sv = _mm512_set1_ps(scale);
  std::int64_t t = 0;
  for (; t + 16 <= s; t += 16)
    for (int j = 0; j < nq; ++j) {
      __m512 qv[NC];
#pragma GCC unroll 8
      for (int c = 0; c < NC; ++c) qv[c] = _mm512_loadu_ps(q[j] + c * 16);
      __m512 acc[16];
#pragma GCC unroll 16
      for (int u = 0; u < 16; ++u) {
        const float* k = keys + (t + u) * dh;
        acc[u] = _mm512_mul_ps(qv[0], _mm512_loadu_ps(k));
#pragma GCC unroll 8
        for (int c = 1; c < NC; ++c) acc[u] = _mm512_fmadd_ps(qv[c], _mm512_loadu_ps(k + c * 16), acc[u]);
      }
      _mm512_storeu_ps(out[j] + t, _mm512_mul_ps(sum16(acc), sv));
    }
  for (; t < s; ++t)
    for (int j = 0; j < nq; ++j) {
      const float* k = keys + t * dh;
      __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(q[j]), _mm512_loadu_ps(k));
      for (int c = 1; c < NC; ++c) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q[j] + c * 16), _mm512_loadu_ps(k + c * 16), acc);
      out[j][t] = _mm512_reduce_add_ps(acc) * scale;
    }
}

// One query's output over s keys, NC = Dh / 16 vectors wide, four keys at a time (independent sums).
template <int NC>
__attribute__((target("avx512f"))) void head_values_avx512(const float* p, const float* vals, std::int64_t s,
                                                           float* out, bool accumulate) {
  constexpr int dh = NC * 16;
  __m512 acc[4][NC];
  for (auto& a : acc)
    for (auto& c : a) c = _mm512_setzero_ps();
  if (accumulate)
    for (int c = 0; c < NC; ++c) acc[0][c] = _mm512_loadu_ps(out + c * 16);
  std::int64_t t = 0;
  for (; t + 4 <= s; t += 4)
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const __m512 pv = _mm512_set1_ps(p[t + u]);
#pragma GCC unroll 4
      for (int c = 0; c < NC; ++c)
        acc[u][c] = _mm512_fmadd_ps(pv, _mm512_loadu_ps(vals + (t + u) * dh + c * 16), acc[u][c]);
    }
  for (; t < s; ++t) {
    const __m512 pv = _mm512_set1_ps(p[t]);
    for (int c = 0; c < NC; ++c) acc[0][c] = _mm512_fmadd_ps(pv, _mm512_loadu_ps(vals + t * dh + c * 16), acc[0][c]);
  }
  for (int c = 0; c < NC; ++c)
    _mm512_storeu_ps(out + c * 16, _mm512_add_ps(_mm512_add_ps(acc[0][c], acc[1][c]), _mm512_add_ps(acc[2][c], acc[3][c])));
}

template <int NC>
void values_avx512(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s,
                   bool accumulate) {
  constexpr std::int64_t block = 64;  // keys: 8 KB of values at Dh = 32
  for (std::int64_t t = 0; t < s; t += block) {
    const auto n = std::min(block, s - t);
    for (int j = 0; j < nq; ++j) head_values_avx512<NC>(p[j] + t, vals + t * NC * 16, n, out[j], accumulate || t > 0);
  }
}

bool scores(const float* const* q, float* const* out, int nq, const float* keys, std::int64_t s, std::int64_t dh,
            float scale) {
  switch (dh) {
    case 16: scores_avx512<1>(q, out, nq, keys, s, scale); return true;
    case 32: scores_avx512<2>(q, out, nq, keys, s, scale); return true;
    case 48: scores_avx512<3>(q, out, nq, keys, s, scale); return true;
    case 64: scores_avx512<4>(q, out, nq, keys, s, scale); return true;
    case 128: scores_avx512<8>(q, out, nq, keys, s, scale); return true;
    default: return false;
  }
}

bool values(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s, std::int64_t dh,
            bool accumulate) {
  switch (dh) {
    case 16: values_avx512<1>(p, out, nq, vals, s, accumulate); return true;
    case 32: values_avx512<2>(p, out, nq, vals, s, accumulate); return true;
    case 48: values_avx512<3>(p, out, nq, vals, s, accumulate); return true;
    case 64: values_avx512<4>(p, out, nq, vals, s, accumulate); return true;
    case 128: values_avx512<8>(p, out, nq, vals, s, accumulate); return true;
    default: return false;
  }
}

// ---- multinomial_one ---------------------------------------------------------------------------
__attribute__((target("avx512f"))) void temper(const std::uint32_t* in, std::uint32_t* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i y = _mm512_loadu_si512(in + i);
    y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 11));
    y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 7), _mm512_set1_epi32(static_cast<int>(0x9d2c5680u))));
    y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 15), _mm512_set1_epi32(static_cast<int>(0xefc60000u))));
    y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 18));
    _mm512_storeu_si512(out + i, y);
  }
  if (i < n) portable_kernels.temper(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) bool scan_row(const float* row, std::int64_t v, std::int64_t& first) {
  const __m512 zero = _mm512_setzero_ps(), inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  __m512 top = _mm512_set1_ps(-1.0f);
  __mmask16 bad = 0;
  std::int64_t i = 0;
  for (; i + 16 <= v; i += 16) {
    const __m512 x = _mm512_loadu_ps(row + i);
    bad |= static_cast<__mmask16>(~(_mm512_cmp_ps_mask(x, zero, _CMP_GE_OQ) & _mm512_cmp_ps_mask(x, inf, _CMP_LT_OQ)));
    top = _mm512_max_ps(top, x);
  }
  float best = _mm512_reduce_max_ps(top);
  bool ok = bad == 0;
  for (; i < v; ++i) {
    ok = ok && std::isfinite(row[i]) && row[i] >= 0;
    best = std::max(best, row[i]);
  }
  first = 0;
  while (first < v && row[first] != best) ++first;
  return ok && first < v;
}

__attribute__((target("avx512f,avx512dq"))) void uniform(const std::uint32_t* bits, double* u, std::int64_t v) {
  const __m512i mask = _mm512_set1_epi64(static_cast<long long>((std::uint64_t{1} << 53) - 1));
  const __m512d unit = _mm512_set1_pd(1.0 / static_cast<double>(std::uint64_t{1} << 53));
  std::int64_t i = 0;
  for (; i + 8 <= v; i += 8) {
    const __m512i x = _mm512_ror_epi64(_mm512_loadu_si512(bits + 2 * i), 32);  // (hi << 32) | lo
    _mm512_storeu_pd(u + i, _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_and_si512(x, mask)), unit));
  }
  if (i < v) portable_kernels.uniform(bits + 2 * i, u + i, v - i);
}

__attribute__((target("avx512f"))) unsigned candidates8(const float* p, const double* u, double best, double slack) {
  const __m512d lhs = _mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(p)), _mm512_set1_pd(slack));
  const __m512d rhs = _mm512_mul_pd(_mm512_loadu_pd(u), _mm512_set1_pd(best));
  return _mm512_cmp_pd_mask(lhs, rhs, _CMP_NLT_UQ);
}

} // namespace

const decode_kernels avx512_kernels{panel_rows, scores,   values,  softmax_rows_avx2, silu_mul_avx2,
                                    temper,     scan_row, uniform, candidates8};

} // namespace leap::policy
