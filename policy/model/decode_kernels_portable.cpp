// The decode step's portable loops (decode_kernels.hpp), for CPUs with neither AVX2 nor AVX-512:
// C++ with no instruction-set intrinsics, the hot loops written with the compiler's 4-float vector
// extension so that they are vectorised for the baseline instruction set (SSE2 on x86-64).
#include "policy/model/decode_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace leap::policy {
namespace {

// 4-float vectors of the compiler's vector extension (GCC and Clang): SSE2 on baseline x86-64,
// NEON on ARM. GCC's -O2 leaves plain loops over floats scalar here (reductions need
// reassociation, and the cheap cost model skips runtime trip counts), which made this path slower
// than LibTorch's.
typedef float vf4 __attribute__((vector_size(16)));

inline vf4 load4(const float* p) {
  vf4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, vf4 v) { __builtin_memcpy(p, &v, sizeof v); }
inline vf4 splat4(float a) { return vf4{a, a, a, a}; }
inline float sum4(vf4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// Half a panel (16 columns, four vectors) for MR <= 3 rows: 12 sums in registers, the weights
// loaded once for the rows (16 vector registers on SSE2).
template <int MR>
void half_panel(const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y, std::int64_t ldy,
                std::int64_t cols, bool accumulate) {
  // Index loops, all unrolled, and no sum's address taken: otherwise GCC keeps the sums in memory
  // and loads, adds and stores each of them on every k.
  vf4 c[MR][4];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) c[r][v] = vf4{0, 0, 0, 0};
  for (std::int64_t i = 0; i < k; ++i) {
    const float* w = panel + i * panel_width;
    const vf4 w0 = load4(w), w1 = load4(w + 4), w2 = load4(w + 8), w3 = load4(w + 12);
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const vf4 a = splat4(x[r * ldx + i]);
      c[r][0] += a * w0;
      c[r][1] += a * w1;
      c[r][2] += a * w2;
      c[r][3] += a * w3;
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    float* yr = y + r * ldy;
    if (cols >= 16) {
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) store4(yr + 4 * v, accumulate ? load4(yr + 4 * v) + c[r][v] : c[r][v]);
    } else {  // the last columns of a matrix whose N is not a multiple of 16
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v)
#pragma GCC unroll 4
        for (int l = 0; l < 4; ++l) {
          const std::int64_t j = 4 * v + l;
          if (j < cols) yr[j] = accumulate ? yr[j] + c[r][v][l] : c[r][v][l];
        }
    }
  }
}

void panel_rows(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                std::int64_t ldy, std::int64_t cols, bool accumulate) {
  for (int half = 0; half < 2 && cols > 16 * half; ++half) {
    const float* p = panel + 16 * half;
    const std::int64_t c = cols - 16 * half;
    int r = 0;
    for (; r + 3 <= mr; r += 3) half_panel<3>(x + r * ldx, ldx, k, p, y + r * ldy + 16 * half, ldy, c, accumulate);
    if (mr - r == 2) half_panel<2>(x + r * ldx, ldx, k, p, y + r * ldy + 16 * half, ldy, c, accumulate);
    if (mr - r == 1) half_panel<1>(x + r * ldx, ldx, k, p, y + r * ldy + 16 * half, ldy, c, accumulate);
  }
}

// Keys in blocks of 16 that stay in L1 while every query uses them (a shared prefix is read from
// memory once per step, not once per row); four keys at a time into independent sums.
bool scores(const float* const* q, float* const* out, int nq, const float* keys, std::int64_t s, std::int64_t dh,
            float scale) {
  if (dh % 4 != 0) {
    for (int j = 0; j < nq; ++j)
      for (std::int64_t t = 0; t < s; ++t) {
        float acc = 0;
        for (std::int64_t i = 0; i < dh; ++i) acc += q[j][i] * keys[t * dh + i];
        out[j][t] = acc * scale;
      }
    return true;
  }
  constexpr std::int64_t block = 16;
  for (std::int64_t t0 = 0; t0 < s; t0 += block) {
    const std::int64_t t1 = std::min(s, t0 + block);
    for (int j = 0; j < nq; ++j) {
      const float* qj = q[j];
      std::int64_t t = t0;
      for (; t + 4 <= t1; t += 4) {
        const float* k = keys + t * dh;
        vf4 a0 = {}, a1 = {}, a2 = {}, a3 = {};
        for (std::int64_t i = 0; i < dh; i += 4) {
          const vf4 qv = load4(qj + i);
          a0 += qv * load4(k + i);
          a1 += qv * load4(k + dh + i);
          a2 += qv * load4(k + 2 * dh + i);
          a3 += qv * load4(k + 3 * dh + i);
        }
        out[j][t] = sum4(a0) * scale;
        out[j][t + 1] = sum4(a1) * scale;
        out[j][t + 2] = sum4(a2) * scale;
        out[j][t + 3] = sum4(a3) * scale;
      }
      for (; t < t1; ++t) {
        vf4 a = {};
        for (std::int64_t i = 0; i < dh; i += 4) a += load4(qj + i) * load4(keys + t * dh + i);
        out[j][t] = sum4(a) * scale;
      }
    }
  }
  return true;
}

bool values(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s, std::int64_t dh,
            bool accumulate) {
  for (int j = 0; j < nq; ++j) {
    float* o = out[j];
    if (!accumulate) std::fill(o, o + dh, 0.0f);
    std::int64_t i = 0;
    for (; i + 8 <= dh; i += 8) {  // eight outputs in two vectors, summed over every key
      vf4 a0 = load4(o + i), a1 = load4(o + i + 4);
      for (std::int64_t t = 0; t < s; ++t) {
        const vf4 pv = splat4(p[j][t]);
        a0 += pv * load4(vals + t * dh + i);
        a1 += pv * load4(vals + t * dh + i + 4);
      }
      store4(o + i, a0);
      store4(o + i + 4, a1);
    }
    for (; i < dh; ++i)
      for (std::int64_t t = 0; t < s; ++t) o[i] += p[j][t] * vals[t * dh + i];
  }
  return true;
}

void temper(const std::uint32_t* in, std::uint32_t* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t y = in[i];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    out[i] = y;
  }
}

bool scan_row(const float* row, std::int64_t v, std::int64_t& first) {
  bool finite = true;
  first = 0;
  for (std::int64_t i = 0; i < v; ++i) {
    finite = finite && std::isfinite(row[i]) && row[i] >= 0;
    if (row[i] > row[first]) first = i;
  }
  return finite;
}

void uniform(const std::uint32_t* bits, double* u, std::int64_t v) {
  constexpr std::uint64_t mask = (std::uint64_t{1} << 53) - 1;
  constexpr double unit = 1.0 / static_cast<double>(std::uint64_t{1} << 53);
  for (std::int64_t i = 0; i < v; ++i) {
    const std::uint64_t hi = bits[2 * i], lo = bits[2 * i + 1];
    u[i] = static_cast<double>(((hi << 32) | lo) & mask) * unit;
  }
}

unsigned candidates8(const float* p, const double* u, double best, double slack) {
  unsigned m = 0;
  for (int j = 0; j < 8; ++j)
    if (!(static_cast<double>(p[j]) * slack < best * u[j])) m |= 1u << j;
  return m;
}

// exp of 4 floats, as the AVX2 loops' exp8 (decode_kernels_avx2.cpp): x = n ln2 + r, the
// polynomial for exp(r), 2^n in the exponent bits; 0 below -87.3, saturating above 88.7. A scalar
// std::exp per entry made this path's softmax and SwiGLU cost more than LibTorch's vector ones.
typedef int vi4 __attribute__((vector_size(16)));
inline vi4 bits4(vf4 v) {
  vi4 b;
  __builtin_memcpy(&b, &v, sizeof b);
  return b;
}
inline vf4 floats4(vi4 b) {
  vf4 v;
  __builtin_memcpy(&v, &b, sizeof v);
  return v;
}
inline vf4 exp4(vf4 x) {
  const vi4 under = x < splat4(-87.33654f);                                  // -1 where true
  x = x < splat4(-87.33654f) ? splat4(-87.33654f) : x;
  x = x > splat4(88.72283f) ? splat4(88.72283f) : x;
  const vf4 fx = x * splat4(1.44269504088896341f) + splat4(0.5f);
  vi4 n = __builtin_convertvector(fx, vi4);                                  // toward zero
  n += (__builtin_convertvector(n, vf4) > fx);                               // floor: -1 where above
  const vf4 nf = __builtin_convertvector(n, vf4);
  vf4 r = x - nf * splat4(0.693359375f);
  r = r - nf * splat4(-2.12194440e-4f);
  vf4 p = splat4(1.9875691500e-4f);
  p = p * r + splat4(1.3981999507e-3f);
  p = p * r + splat4(8.3334519073e-3f);
  p = p * r + splat4(4.1665795894e-2f);
  p = p * r + splat4(1.6666665459e-1f);
  p = p * r + splat4(5.0000001201e-1f);
  p = p * (r * r) + r + splat4(1.0f);
  const vi4 big = n > 127;                                                   // only 88.7: 2^128
  n += big;
  p = p * floats4((n + 127) << 23);
  p = p - p * __builtin_convertvector(big, vf4);                             // big: times 2
  return floats4(bits4(p) & ~under);
}

void softmax_rows(float* x, std::int64_t rows, std::int64_t n) {
  const std::int64_t body = n & ~std::int64_t{3};
  for (std::int64_t r = 0; r < rows; ++r, x += n) {
    // The maximum in vector lanes: a scalar max chain waits on each compare (a third of the
    // softmax's time when written with std::max_element).
    vf4 top4 = splat4(std::numeric_limits<float>::lowest());
    for (std::int64_t i = 0; i < body; i += 4) {
      const vf4 v = load4(x + i);
      top4 = v > top4 ? v : top4;
    }
    float top = std::max(std::max(top4[0], top4[1]), std::max(top4[2], top4[3]));
    for (std::int64_t i = body; i < n; ++i) top = std::max(top, x[i]);
    vf4 sum4v = splat4(0.0f);
    for (std::int64_t i = 0; i < body; i += 4) {
      const vf4 e = exp4(load4(x + i) - splat4(top));
      store4(x + i, e);
      sum4v += e;
    }
    float sum = sum4(sum4v);
    for (std::int64_t i = body; i < n; ++i) {
      vf4 e = exp4(splat4(x[i] - top));
      sum += (x[i] = e[0]);
    }
    const float inv = 1.0f / sum;
    for (std::int64_t i = 0; i < body; i += 4) store4(x + i, load4(x + i) * splat4(inv));
    for (std::int64_t i = body; i < n; ++i) x[i] *= inv;
  }
}

void silu_mul(const float* gu, std::int64_t rows, std::int64_t f, float* out) {
  const std::int64_t body = f & ~std::int64_t{3};
  for (std::int64_t r = 0; r < rows; ++r, gu += 2 * f, out += f) {
    for (std::int64_t i = 0; i < body; i += 4) {
      const vf4 g = load4(gu + i);
      store4(out + i, g / (splat4(1.0f) + exp4(-g)) * load4(gu + f + i));
    }
    for (std::int64_t i = body; i < f; ++i) out[i] = gu[i] / (1.0f + exp4(splat4(-gu[i]))[0]) * gu[f + i];
  }
}

} // namespace

const decode_kernels portable_kernels{panel_rows, scores,   values,  softmax_rows, silu_mul,
                                      temper,     scan_row, uniform, candidates8};

const decode_kernels& kernels_for(decode_path p) {
  switch (p) {
    case decode_path::avx512: return avx512_kernels;
    case decode_path::avx2: return avx2_kernels;
    default: return portable_kernels;
  }
}

} // namespace leap::policy
