// The fused one-token decoding step: see decode_step.hpp.
#include "policy/decode_step.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

// GCC 12 reports the deliberately undefined operands of some AVX-512 intrinsics (avx512fintrin.h's
// _mm512_undefined_ps / _pd) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace leap::policy {
namespace {

constexpr std::int64_t panel_width = 32;  // two AVX-512 vectors of float

// LEAP_DECODE_PORTABLE=1 in the environment forces the portable loops (to test them on a machine
// with AVX-512).
bool portable_forced() {
  static const bool forced = std::getenv("LEAP_DECODE_PORTABLE") != nullptr;
  return forced;
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && !portable_forced();
  return has;
}

// ---- small-M GEMM over packed panels --------------------------------------------------------
// One panel: y[0..MR, 0..cols) (+)= x[0..MR, 0..K) . panel[K, 32]. MR rows share every load of
// the panel, so a batch of up to 8 rows reads each weight once.

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

void panel_portable(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                    std::int64_t ldy, std::int64_t cols, bool accumulate) {
  for (int r = 0; r < mr; ++r) {
    float acc[panel_width] = {};
    for (std::int64_t i = 0; i < k; ++i) {
      const float a = x[r * ldx + i];
      const float* w = panel + i * panel_width;
      for (std::int64_t j = 0; j < panel_width; ++j) acc[j] += a * w[j];
    }
    float* yr = y + r * ldy;
    for (std::int64_t j = 0; j < cols; ++j) yr[j] = accumulate ? yr[j] + acc[j] : acc[j];
  }
}

void panel_rows(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                std::int64_t ldy, std::int64_t cols, bool accumulate) {
  if (!cpu_has_avx512()) return panel_portable(mr, x, ldx, k, panel, y, ldy, cols, accumulate);
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
// The nq queries q[i] [Dh] that share a KV head (the rep heads of one row, or of every row over a
// shared prompt prefix) against keys/vals [s, Dh] with validity valid [s]:
//   group_scores: out[i][t] = q[i] . key[t] * scale, lowest() for a pad key (the decoder's
//                 masked_fill), so a following softmax gives pads probability 0;
//   group_values: out[i] (+)= sum_t probs[i][t] * vals[t].
// Keys are walked in blocks that stay in L1 while every query uses them: a shared prefix is read
// from memory once per step, not once per row.

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

void group_scores(const float* const* q, float* const* out, int nq, const float* keys, const bool* valid,
                  bool all_valid, std::int64_t s, std::int64_t dh, float scale) {
  const bool vec = cpu_has_avx512();
  if (vec && dh == 16) {
    scores_avx512<1>(q, out, nq, keys, s, scale);
  } else if (vec && dh == 32) {
    scores_avx512<2>(q, out, nq, keys, s, scale);
  } else if (vec && dh == 48) {
    scores_avx512<3>(q, out, nq, keys, s, scale);
  } else if (vec && dh == 64) {
    scores_avx512<4>(q, out, nq, keys, s, scale);
  } else if (vec && dh == 128) {
    scores_avx512<8>(q, out, nq, keys, s, scale);
  } else {
    for (int j = 0; j < nq; ++j)
      for (std::int64_t t = 0; t < s; ++t) {
        float acc = 0;
        for (std::int64_t i = 0; i < dh; ++i) acc += q[j][i] * keys[t * dh + i];
        out[j][t] = acc * scale;
      }
  }
  if (all_valid) return;
  const float masked = std::numeric_limits<float>::lowest();
  for (int j = 0; j < nq; ++j)
    for (std::int64_t t = 0; t < s; ++t)
      if (!valid[t]) out[j][t] = masked;
}

void group_values(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s,
                  std::int64_t dh, bool accumulate) {
  const bool vec = cpu_has_avx512();
  if (vec && dh == 16) return values_avx512<1>(p, out, nq, vals, s, accumulate);
  if (vec && dh == 32) return values_avx512<2>(p, out, nq, vals, s, accumulate);
  if (vec && dh == 48) return values_avx512<3>(p, out, nq, vals, s, accumulate);
  if (vec && dh == 64) return values_avx512<4>(p, out, nq, vals, s, accumulate);
  if (vec && dh == 128) return values_avx512<8>(p, out, nq, vals, s, accumulate);
  for (int j = 0; j < nq; ++j) {
    float* o = out[j];
    if (!accumulate) std::fill(o, o + dh, 0.0f);
    for (std::int64_t t = 0; t < s; ++t)
      for (std::int64_t i = 0; i < dh; ++i) o[i] += p[j][t] * vals[t * dh + i];
  }
}

// out[r] = weight * (x[r] / sqrt(mean(x[r]^2) + eps)), as rms_norm_impl in float32.
void rms_norm_rows(const float* x, std::int64_t rows, std::int64_t d, const float* weight, double eps, float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float ss = 0;
    for (std::int64_t i = 0; i < d; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + static_cast<float>(eps));
    float* o = out + r * d;
    for (std::int64_t i = 0; i < d; ++i) o[i] = weight[i] * (xr[i] * inv);
  }
}

// HF rotate_half RoPE of one head in place: x * cos + rotate_half(x) * sin.
void rope_head(float* x, const float* cos, const float* sin, std::int64_t dh) {
  const auto half = dh / 2;
  for (std::int64_t i = 0; i < half; ++i) {
    const float a = x[i], b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = b * cos[i + half] + a * sin[i + half];
  }
}

torch::Tensor f32(const torch::Tensor& t) { return t.detach().to(torch::kFloat).contiguous(); }

} // namespace

namespace {

// n outputs of at::mt19937::operator() on the engine state `d`, as that operator would produce
// them (tempering vectorised; the state regenerated every 624 outputs exactly when it would be).
__attribute__((target("avx512f"))) void temper_avx512(const std::uint32_t* in, std::uint32_t* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i y = _mm512_loadu_si512(in + i);
    y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 11));
    y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 7), _mm512_set1_epi32(static_cast<int>(0x9d2c5680u))));
    y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 15), _mm512_set1_epi32(static_cast<int>(0xefc60000u))));
    y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 18));
    _mm512_storeu_si512(out + i, y);
  }
  for (; i < n; ++i) {
    std::uint32_t y = in[i];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    out[i] = y;
  }
}

void temper(const std::uint32_t* in, std::uint32_t* out, std::int64_t n) {
  if (cpu_has_avx512()) return temper_avx512(in, out, n);
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t y = in[i];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    out[i] = y;
  }
}

// at::mt19937_engine::next_state.
void mt_next_state(at::mt19937_data_pod& d) {
  constexpr int n = at::MERSENNE_STATE_N, m = at::MERSENNE_STATE_M;
  constexpr std::uint32_t matrix_a = at::MATRIX_A, umask = at::UMASK, lmask = at::LMASK;
  auto twist = [&](std::uint32_t u, std::uint32_t v) {
    return ((((u & umask) | (v & lmask)) >> 1) ^ ((v & 1u) ? matrix_a : 0u));
  };
  std::uint32_t* p = d.state_.data();
  d.left_ = n;
  d.next_ = 0;
  for (int j = n - m + 1; --j; p++) *p = p[m] ^ twist(p[0], p[1]);
  for (int j = m; --j; p++) *p = p[m - n] ^ twist(p[0], p[1]);
  *p = p[m - n] ^ twist(p[0], d.state_[0]);
}

void mt_generate(at::mt19937_data_pod& d, std::uint32_t* out, std::int64_t count) {
  while (count > 0) {
    if (d.left_ == 1) {  // this output's decrement reaches 0: the state is regenerated first
      mt_next_state(d);
      temper(d.state_.data() + d.next_++, out++, 1);
      --count;
      continue;
    }
    const auto chunk = std::min<std::int64_t>(count, d.left_ - 1);
    temper(d.state_.data() + d.next_, out, chunk);
    d.next_ += static_cast<std::uint32_t>(chunk);
    d.left_ -= static_cast<int>(chunk);
    out += chunk;
    count -= chunk;
  }
}

bool cpu_has_avx512dq() {
  static const bool has = cpu_has_avx512() && __builtin_cpu_supports("avx512dq");
  return has;
}

// Row checks as multinomial's (every entry finite and >= 0) and the first index of the maximum.
__attribute__((target("avx512f"))) bool scan_row_avx512(const float* row, std::int64_t v, std::int64_t& first) {
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

// u[i] = uniform_real<double>(0, 1) of the 64-bit draw made of bits[2i] (high) and bits[2i+1].
__attribute__((target("avx512f,avx512dq"))) void uniform_avx512(const std::uint32_t* bits, double* u, std::int64_t v) {
  const __m512i mask = _mm512_set1_epi64(static_cast<long long>((std::uint64_t{1} << 53) - 1));
  const __m512d unit = _mm512_set1_pd(1.0 / static_cast<double>(std::uint64_t{1} << 53));
  std::int64_t i = 0;
  for (; i + 8 <= v; i += 8) {
    const __m512i x = _mm512_ror_epi64(_mm512_loadu_si512(bits + 2 * i), 32);  // (hi << 32) | lo
    _mm512_storeu_pd(u + i, _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_and_si512(x, mask)), unit));
  }
  for (; i < v; ++i) {
    const std::uint64_t hi = bits[2 * i], lo = bits[2 * i + 1];
    u[i] = static_cast<double>(((hi << 32) | lo) & ((std::uint64_t{1} << 53) - 1)) * (1.0 / static_cast<double>(std::uint64_t{1} << 53));
  }
}

// Bit j of the result: entry i0 + j might beat `best` (p * slack >= best * u, or unordered).
__attribute__((target("avx512f"))) __mmask8 candidates_avx512(const float* p, const double* u, double best,
                                                               double slack) {
  const __m512d lhs = _mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(p)), _mm512_set1_pd(slack));
  const __m512d rhs = _mm512_mul_pd(_mm512_loadu_pd(u), _mm512_set1_pd(best));
  return _mm512_cmp_pd_mask(lhs, rhs, _CMP_NLT_UQ);
}

} // namespace

torch::Tensor multinomial_one(const torch::Tensor& probs, at::Generator& gen) {
  TORCH_CHECK(probs.dim() == 2 && probs.scalar_type() == torch::kFloat && probs.device().is_cpu(),
              "multinomial_one: expected float32 [R, V] on the CPU, got ", probs.sizes());
  const auto p = probs.contiguous();
  const auto R = p.size(0), V = p.size(1);
  const float* pp = p.data_ptr<float>();
  auto out = torch::empty({R, 1}, torch::kLong);                                            // [R, 1]
  auto* op = out.data_ptr<std::int64_t>();
  auto* g = at::check_generator<at::CPUGeneratorImpl>(gen);
  std::lock_guard<std::mutex> lock(g->mutex_);
  // The generator's Mersenne Twister, stepped here in bulk (random64() is an out-of-line call per
  // draw) and stored back after the draws.
  at::mt19937 engine = g->engine();
  auto state = engine.data();
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(2 * V));
  std::vector<double> u(static_cast<std::size_t>(V));
  constexpr std::uint64_t mask = (std::uint64_t{1} << 53) - 1;
  constexpr double unit = 1.0 / static_cast<double>(std::uint64_t{1} << 53);
  // Margin on the bound: float rounding of q and of p / q is below 2^-23 relative.
  constexpr double slack = 1.0 + 1e-6;
  // LibTorch's checks (before any draw), and each row's most probable entry: its quotient is the
  // row's first "best".
  const bool vec = cpu_has_avx512dq();
  std::vector<std::int64_t> firsts(static_cast<std::size_t>(R));
  for (std::int64_t r = 0; r < R; ++r) {
    const float* row = pp + r * V;
    std::int64_t first = 0;
    bool finite = true;
    if (vec) {
      finite = scan_row_avx512(row, V, first);
    } else {
      for (std::int64_t i = 0; i < V; ++i) {
        finite = finite && std::isfinite(row[i]) && row[i] >= 0;
        if (row[i] > row[first]) first = i;
      }
    }
    TORCH_CHECK(finite, "probability tensor contains either `inf`, `nan` or element < 0");
    TORCH_CHECK(row[first] > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    firsts[static_cast<std::size_t>(r)] = first;
  }
  for (std::int64_t r = 0; r < R; ++r) {
    const float* row = pp + r * V;
    const std::int64_t first = firsts[static_cast<std::size_t>(r)];
    // uniform_real<double>(0, 1) of random64(): two 32-bit outputs, the first one high.
    mt_generate(state, bits.data(), 2 * V);
    if (vec) {
      uniform_avx512(bits.data(), u.data(), V);
    } else {
      for (std::int64_t i = 0; i < V; ++i) {
        const std::uint64_t hi = bits[static_cast<std::size_t>(2 * i)], lo = bits[static_cast<std::size_t>(2 * i + 1)];
        u[static_cast<std::size_t>(i)] = static_cast<double>(((hi << 32) | lo) & mask) * unit;
      }
    }
    auto quotient = [&](std::int64_t i) {                                         // as exponential_ then div
      const auto q = static_cast<float>(-1.0 * std::log(1.0 - u[static_cast<std::size_t>(i)]));
      return row[i] / q;
    };
    std::int64_t best_i = first;
    float best = quotient(first);
    auto visit = [&](std::int64_t i) {
      if (i == first) return;
      const float q = quotient(i);
      const bool wins = std::isnan(q) ? (!std::isnan(best) || i < best_i)
                                      : (!std::isnan(best) && (q > best || (q == best && i < best_i)));
      if (wins) {
        best = q;
        best_i = i;
      }
    };
    // q_i <= p_i / u_i: skip an entry when that bound is certainly below the best (never for a
    // NaN best or a zero u, where the comparison is false). Blocks test against the best as of
    // their start, which can only keep more entries; once the best is NaN nothing later wins.
    std::int64_t i = 0;
    if (vec)
      for (; i + 8 <= V; i += 8)
        for (__mmask8 m = candidates_avx512(row + i, u.data() + i, static_cast<double>(best), slack); m != 0;
             m = static_cast<__mmask8>(m & (m - 1)))
          visit(i + __builtin_ctz(m));
    for (; i < V; ++i)
      if (!(static_cast<double>(row[i]) * slack < static_cast<double>(best) * u[static_cast<std::size_t>(i)])) visit(i);
    op[r] = best_i;
  }
  engine.set_data(state);
  g->set_engine(engine);
  return out;
}

decode_step::packed pack_weight(const torch::Tensor& w) {
  TORCH_CHECK(w.dim() == 2, "pack_weight: expected [N, K], got ", w.sizes());
  const auto n = w.size(0), k = w.size(1);
  const auto np = (n + panel_width - 1) / panel_width * panel_width;
  auto wt = torch::zeros({k, np}, torch::kFloat);                                          // [K, Np]
  wt.narrow(1, 0, n).copy_(w.detach().t());
  decode_step::packed p;
  p.panels = wt.view({k, np / panel_width, panel_width}).permute({1, 0, 2}).contiguous();  // [Np/32, K, 32]
  p.n = n;
  p.k = k;
  return p;
}

void packed_gemm(const float* x, std::int64_t m, std::int64_t ldx, const decode_step::packed& w, float* y,
                 std::int64_t ldy, bool accumulate) {
  const float* base = w.panels.data_ptr<float>();
  const auto panels = w.panels.size(0);
  // Panel-major: a panel (K x 32 floats) stays in cache while every block of 8 rows uses it.
  for (std::int64_t p = 0; p < panels; ++p) {
    const auto col = p * panel_width;
    for (std::int64_t r0 = 0; r0 < m; r0 += 8) {
      const int mr = static_cast<int>(std::min<std::int64_t>(8, m - r0));
      panel_rows(mr, x + r0 * ldx, ldx, w.k, base + p * w.k * panel_width, y + r0 * ldy + col, ldy,
                 std::min(panel_width, w.n - col), accumulate);
    }
  }
}

std::unique_ptr<decode_step> decode_step::make(const decoder_impl& model) {
  std::int64_t count = 0;
  for (const auto& p : model.parameters()) {
    if (p.scalar_type() != torch::kFloat || !p.device().is_cpu()) return nullptr;
    count += p.numel();
  }
  if (count > max_parameters) return nullptr;
  // Without AVX-512 the portable loops are slower than LibTorch's path (bench_sampling G = 8:
  // 540 vs ~350 ms of CPU a call); they run only when forced, for the tests.
  if (!cpu_has_avx512() && !portable_forced()) return nullptr;
  torch::NoGradGuard no_grad;
  auto s = std::make_unique<decode_step>(passkey<decode_step>());
  s->cfg_ = model.config();
  const auto& stack = *model.model;
  for (std::size_t l = 0; l < stack.layers->size(); ++l) {
    const auto& src = stack.layers->at<decoder_layer_impl>(l);
    const auto& att = *src.self_attn;
    const auto& mlp = *src.mlp_;
    layer dst;
    dst.qkv = pack_weight(torch::cat({att.q_proj->weight, att.k_proj->weight, att.v_proj->weight}, 0));
    if (att.q_proj->bias.defined())
      dst.qkv_bias = f32(torch::cat({att.q_proj->bias, att.k_proj->bias, att.v_proj->bias}, 0));
    dst.o = pack_weight(att.o_proj->weight);
    if (att.o_proj->bias.defined()) dst.o_bias = f32(att.o_proj->bias);
    dst.gate_up = pack_weight(torch::cat({mlp.gate_proj->weight, mlp.up_proj->weight}, 0));
    dst.down = pack_weight(mlp.down_proj->weight);
    dst.ln1 = f32(src.input_layernorm->weight);
    dst.ln2 = f32(src.post_attention_layernorm->weight);
    s->layers_.push_back(std::move(dst));
  }
  s->embed_ = f32(stack.embed_tokens->weight);
  s->lm_head_ = pack_weight(model.lm_head ? model.lm_head->weight : stack.embed_tokens->weight);
  s->norm_ = f32(stack.norm->weight);
  s->rope_cos_ = f32(stack.rope_cos);
  s->rope_sin_ = f32(stack.rope_sin);
  return s;
}

namespace {

// A cache's K/V buffers as float32, contiguous, on the CPU (made so if they are not).
void check_cache(kv_cache& c, std::int64_t layers, const char* what) {
  TORCH_CHECK(static_cast<std::int64_t>(c.k.size()) == layers, "decode_step: ", what, " has ", c.k.size(),
              " layers, model has ", layers);
  for (auto* bufs : {&c.k, &c.v})
    for (auto& t : *bufs) {
      TORCH_CHECK(t.scalar_type() == torch::kFloat && t.device().is_cpu(), "decode_step: ", what,
                  " must be float32 on the CPU");
      if (!t.is_contiguous()) t = t.contiguous();
    }
  if (!c.key_valid.is_contiguous()) c.key_valid = c.key_valid.contiguous();
  if (!c.next_pos.is_contiguous()) c.next_pos = c.next_pos.contiguous();
}

bool all_true(const bool* v, std::int64_t n) { return std::all_of(v, v + n, [](bool b) { return b; }); }

} // namespace

// A layer after its attention: h += o_proj(attn) (+ bias); x = post-attention RMSNorm(h);
// h += down_proj(silu(gate(x)) * up(x)). attn [rows, H * Dh], h and x [rows, D], gate_up
// [rows, 2F] scratch.
void decode_step::finish_layer(const layer& L, const float* attn, std::int64_t rows, float* h, float* x,
                               torch::Tensor& gate_up) const {
  const std::int64_t D = cfg_.d_model, F = cfg_.d_ff;
  packed_gemm(attn, rows, L.o.k, L.o, h, D, true);                                       // h += o_proj(attn)
  if (L.o_bias.defined()) {
    const float* b = L.o_bias.data_ptr<float>();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < D; ++i) h[r * D + i] += b[i];
  }
  rms_norm_rows(h, rows, D, L.ln2.data_ptr<float>(), cfg_.rms_eps, x);
  packed_gemm(x, rows, D, L.gate_up, gate_up.data_ptr<float>(), 2 * F, false);
  auto act = torch::silu(gate_up.narrow(1, 0, F)).mul_(gate_up.narrow(1, F, F)).contiguous();  // [rows, F]
  packed_gemm(act.data_ptr<float>(), rows, F, L.down, h, D, true);                        // h += down_proj(act)
}

torch::Tensor decode_step::operator()(const torch::Tensor& tokens, kv_cache& cache, kv_cache* prefix) const {
  const auto tok = tokens.to(torch::kCPU, torch::kLong).contiguous();
  const auto R = tok.numel();
  TORCH_CHECK(cache.batch() == R, "decode_step: cache has ", cache.batch(), " rows, input has ", R);
  const auto D = cfg_.d_model, H = cfg_.n_heads, KV = cfg_.kv_heads(), Dh = cfg_.dim_per_head();
  const auto F = cfg_.d_ff, V = cfg_.vocab_size, rep = H / KV, NQKV = (H + 2 * KV) * Dh;

  cache.reserve(1);
  check_cache(cache, cfg_.n_layers, "cache");
  std::int64_t P = 0, pcap = 0;  // shared prefix keys, prefix capacity
  const bool* pvalid = nullptr;
  bool prefix_all_valid = true;
  if (prefix != nullptr) {
    TORCH_CHECK(prefix->batch() == 1, "decode_step: a shared prefix has one row, not ", prefix->batch());
    check_cache(*prefix, cfg_.n_layers, "prefix");
    P = prefix->length;
    pcap = prefix->capacity();
    pvalid = prefix->key_valid.data_ptr<bool>();
    prefix_all_valid = all_true(pvalid, P);
  }
  const auto past = cache.length, own = past + 1, S = P + own, cap = cache.capacity();
  const auto f_opts = torch::TensorOptions().dtype(torch::kFloat);
  cache.key_valid.narrow(1, past, 1).fill_(true);
  const bool* valid = cache.key_valid.data_ptr<bool>();                                     // [R, cap]
  const std::int64_t* next_pos = cache.next_pos.data_ptr<std::int64_t>();                   // [R]
  std::vector<char> row_all_valid(static_cast<std::size_t>(R));  // no pad among the row's own keys
  for (std::int64_t r = 0; r < R; ++r) row_all_valid[static_cast<std::size_t>(r)] = all_true(valid + r * cap, own);

  // Rows' token embeddings.
  auto h = torch::empty({R, D}, f_opts);                                                    // [R, D]
  float* hp = h.data_ptr<float>();
  const std::int64_t* tp = tok.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < R; ++r) {
    TORCH_CHECK(tp[r] >= 0 && tp[r] < V, "decoder: token id out of range [0, ", V, ")");
    TORCH_CHECK(next_pos[r] >= 0 && next_pos[r] < cfg_.max_seq_len, "decoder: position ", next_pos[r],
                " exceeds max_position_embeddings = ", cfg_.max_seq_len);
    std::memcpy(hp + r * D, embed_.data_ptr<float>() + tp[r] * D, sizeof(float) * static_cast<std::size_t>(D));
  }
  const float* cos_tab = rope_cos_.data_ptr<float>();
  const float* sin_tab = rope_sin_.data_ptr<float>();

  auto xn = torch::empty({R, D}, f_opts);                                                   // [R, D]
  auto qkv = torch::empty({R, NQKV}, f_opts);                                               // [R, (H+2KV) Dh]
  auto scores = torch::empty({R, H, S}, f_opts);                                            // [R, H, S]: prefix keys, then own
  auto attn = torch::empty({R, H * Dh}, f_opts);                                            // [R, H Dh]
  auto gate_up = torch::empty({R, 2 * F}, f_opts);                                          // [R, 2F]
  float* xp = xn.data_ptr<float>();
  float* qp = qkv.data_ptr<float>();
  float* sp = scores.data_ptr<float>();
  float* ap = attn.data_ptr<float>();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));
  // Per KV head: its R * rep queries, their score rows, probability rows and outputs.
  const auto nq = static_cast<std::size_t>(R * rep);
  std::vector<const float*> qs(nq), ps(nq);
  std::vector<float*> score_rows(nq), outs(nq);

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& L = layers_[l];
    float* kb = cache.k[l].data_ptr<float>();                                               // [R, KV, cap, Dh]
    float* vb = cache.v[l].data_ptr<float>();
    rms_norm_rows(hp, R, D, L.ln1.data_ptr<float>(), cfg_.rms_eps, xp);
    packed_gemm(xp, R, D, L.qkv, qp, NQKV, false);
    for (std::int64_t r = 0; r < R; ++r) {
      float* row = qp + r * NQKV;
      if (L.qkv_bias.defined()) {
        const float* b = L.qkv_bias.data_ptr<float>();
        for (std::int64_t i = 0; i < NQKV; ++i) row[i] += b[i];
      }
      const float* c = cos_tab + next_pos[r] * Dh;
      const float* s = sin_tab + next_pos[r] * Dh;
      for (std::int64_t hd = 0; hd < H + KV; ++hd) rope_head(row + hd * Dh, c, s, Dh);
      for (std::int64_t g = 0; g < KV; ++g) {
        const auto at = ((r * KV + g) * cap + past) * Dh;
        std::memcpy(kb + at, row + (H + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
        std::memcpy(vb + at, row + (H + KV + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
      }
    }
    // Scores: every row's queries against the shared prefix at once, then each row's own keys;
    // pads masked as the decoder does.
    for (std::int64_t g = 0; g < KV; ++g) {
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t j = 0; j < rep; ++j) {
          const auto i = static_cast<std::size_t>(r * rep + j);
          qs[i] = qp + r * NQKV + (g * rep + j) * Dh;
          score_rows[i] = sp + (r * H + g * rep + j) * S;
        }
      if (P > 0)
        group_scores(qs.data(), score_rows.data(), static_cast<int>(nq), prefix->k[l].data_ptr<float>() + g * pcap * Dh,
                     pvalid, prefix_all_valid, P, Dh, scale);
      for (std::int64_t r = 0; r < R; ++r) {
        const auto i = static_cast<std::size_t>(r * rep);
        for (std::int64_t j = 0; j < rep; ++j) score_rows[i + static_cast<std::size_t>(j)] += P;
        group_scores(qs.data() + i, score_rows.data() + i, static_cast<int>(rep), kb + (r * KV + g) * cap * Dh,
                     valid + r * cap, row_all_valid[static_cast<std::size_t>(r)] != 0, own, Dh, scale);
      }
    }
    auto probs = torch::softmax(scores, -1);                                                // [R, H, S]
    const float* pp = probs.data_ptr<float>();
    for (std::int64_t g = 0; g < KV; ++g) {
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t j = 0; j < rep; ++j) {
          const auto i = static_cast<std::size_t>(r * rep + j);
          ps[i] = pp + (r * H + g * rep + j) * S;
          outs[i] = ap + (r * H + g * rep + j) * Dh;
        }
      if (P > 0)
        group_values(ps.data(), outs.data(), static_cast<int>(nq), prefix->v[l].data_ptr<float>() + g * pcap * Dh, P,
                     Dh, false);
      for (std::int64_t r = 0; r < R; ++r) {
        const auto i = static_cast<std::size_t>(r * rep);
        for (std::int64_t j = 0; j < rep; ++j) ps[i + static_cast<std::size_t>(j)] += P;
        group_values(ps.data() + i, outs.data() + i, static_cast<int>(rep), vb + (r * KV + g) * cap * Dh, own, Dh,
                     P > 0);
      }
    }
    finish_layer(L, ap, R, hp, xp, gate_up);
  }
  rms_norm_rows(hp, R, D, norm_.data_ptr<float>(), cfg_.rms_eps, xp);
  auto logits = torch::empty({R, V}, f_opts);                                               // [R, V]
  packed_gemm(xp, R, D, lm_head_, logits.data_ptr<float>(), V, false);
  cache.length = own;
  cache.next_pos = cache.next_pos + 1;
  return logits;
}

torch::Tensor decode_step::prefill(const torch::Tensor& tokens, kv_cache& cache) const {
  const auto tok = tokens.to(torch::kCPU, torch::kLong).contiguous().view({-1});
  const auto T = tok.numel();
  TORCH_CHECK(T > 0, "decode_step: prefill of no tokens");
  TORCH_CHECK(cache.batch() == 1, "decode_step: prefill takes a one-row cache, not ", cache.batch());
  const auto D = cfg_.d_model, H = cfg_.n_heads, KV = cfg_.kv_heads(), Dh = cfg_.dim_per_head();
  const auto F = cfg_.d_ff, V = cfg_.vocab_size, rep = H / KV, NQKV = (H + 2 * KV) * Dh;

  cache.reserve(T);
  check_cache(cache, cfg_.n_layers, "cache");
  const auto past = cache.length, S = past + T, cap = cache.capacity();
  const auto pos0 = cache.next_pos.data_ptr<std::int64_t>()[0];
  TORCH_CHECK(pos0 >= 0 && pos0 + T <= cfg_.max_seq_len, "decoder: position ", pos0 + T - 1,
              " exceeds max_position_embeddings = ", cfg_.max_seq_len);
  cache.key_valid.narrow(1, past, T).fill_(true);
  const bool* valid = cache.key_valid.data_ptr<bool>();                                     // [1, cap]
  const bool past_all_valid = all_true(valid, past);
  const auto f_opts = torch::TensorOptions().dtype(torch::kFloat);

  auto h = torch::empty({T, D}, f_opts);                                                    // [T, D]
  float* hp = h.data_ptr<float>();
  const std::int64_t* tp = tok.data_ptr<std::int64_t>();
  for (std::int64_t t = 0; t < T; ++t) {
    TORCH_CHECK(tp[t] >= 0 && tp[t] < V, "decoder: token id out of range [0, ", V, ")");
    std::memcpy(hp + t * D, embed_.data_ptr<float>() + tp[t] * D, sizeof(float) * static_cast<std::size_t>(D));
  }
  auto xn = torch::empty({T, D}, f_opts);                                                   // [T, D]
  auto qkv = torch::empty({T, NQKV}, f_opts);                                               // [T, (H+2KV) Dh]
  auto scores = torch::empty({T, H, S}, f_opts);                                            // [T, H, S]
  auto attn = torch::empty({T, H * Dh}, f_opts);                                            // [T, H Dh]
  auto gate_up = torch::empty({T, 2 * F}, f_opts);                                          // [T, 2F]
  float* xp = xn.data_ptr<float>();
  float* qp = qkv.data_ptr<float>();
  float* sp = scores.data_ptr<float>();
  float* ap = attn.data_ptr<float>();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));
  const float masked = std::numeric_limits<float>::lowest();
  std::vector<const float*> qs(static_cast<std::size_t>(rep)), ps(static_cast<std::size_t>(rep));
  std::vector<float*> score_rows(static_cast<std::size_t>(rep)), outs(static_cast<std::size_t>(rep));

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& L = layers_[l];
    float* kb = cache.k[l].data_ptr<float>();                                               // [1, KV, cap, Dh]
    float* vb = cache.v[l].data_ptr<float>();
    rms_norm_rows(hp, T, D, L.ln1.data_ptr<float>(), cfg_.rms_eps, xp);
    packed_gemm(xp, T, D, L.qkv, qp, NQKV, false);
    for (std::int64_t t = 0; t < T; ++t) {
      float* row = qp + t * NQKV;
      if (L.qkv_bias.defined()) {
        const float* b = L.qkv_bias.data_ptr<float>();
        for (std::int64_t i = 0; i < NQKV; ++i) row[i] += b[i];
      }
      const float* c = rope_cos_.data_ptr<float>() + (pos0 + t) * Dh;
      const float* sn = rope_sin_.data_ptr<float>() + (pos0 + t) * Dh;
      for (std::int64_t hd = 0; hd < H + KV; ++hd) rope_head(row + hd * Dh, c, sn, Dh);
      for (std::int64_t g = 0; g < KV; ++g) {
        const auto at = (g * cap + past + t) * Dh;
        std::memcpy(kb + at, row + (H + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
        std::memcpy(vb + at, row + (H + KV + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
      }
    }
    // Causal: query t sees keys [0, past + t]; later keys get lowest() as in the decoder.
    for (std::int64_t t = 0; t < T; ++t) {
      const auto seen = past + t + 1;
      for (std::int64_t g = 0; g < KV; ++g) {
        for (std::int64_t j = 0; j < rep; ++j) {
          qs[static_cast<std::size_t>(j)] = qp + t * NQKV + (g * rep + j) * Dh;
          score_rows[static_cast<std::size_t>(j)] = sp + (t * H + g * rep + j) * S;
          std::fill(score_rows[static_cast<std::size_t>(j)] + seen, score_rows[static_cast<std::size_t>(j)] + S, masked);
        }
        group_scores(qs.data(), score_rows.data(), static_cast<int>(rep), kb + g * cap * Dh, valid,
                     past_all_valid, seen, Dh, scale);
      }
    }
    auto probs = torch::softmax(scores, -1);                                                // [T, H, S]
    const float* pp = probs.data_ptr<float>();
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t g = 0; g < KV; ++g) {
        for (std::int64_t j = 0; j < rep; ++j) {
          ps[static_cast<std::size_t>(j)] = pp + (t * H + g * rep + j) * S;
          outs[static_cast<std::size_t>(j)] = ap + (t * H + g * rep + j) * Dh;
        }
        group_values(ps.data(), outs.data(), static_cast<int>(rep), vb + g * cap * Dh, past + t + 1, Dh, false);
      }
    finish_layer(L, ap, T, hp, xp, gate_up);
  }
  rms_norm_rows(hp + (T - 1) * D, 1, D, norm_.data_ptr<float>(), cfg_.rms_eps, xp);
  auto logits = torch::empty({1, V}, f_opts);                                               // [1, V]
  packed_gemm(xp, 1, D, lm_head_, logits.data_ptr<float>(), V, false);
  cache.length = S;
  cache.next_pos = cache.next_pos + T;
  return logits;
}

} // namespace leap::policy
