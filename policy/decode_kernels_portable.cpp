// The decode step's portable loops (decode_kernels.hpp): plain C++ for any CPU, written so that
// the compiler vectorises them for the baseline instruction set (SSE2 on x86-64).
#include "policy/decode_kernels.hpp"

#include <algorithm>
#include <cmath>

namespace leap::policy {
namespace {

// MR rows share every load of the panel; their 32 sums each stay in the compiler's vectors.
template <int MR>
void panel_block(const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y, std::int64_t ldy,
                 std::int64_t cols, bool accumulate) {
  float acc[MR][panel_width] = {};
  for (std::int64_t i = 0; i < k; ++i) {
    const float* w = panel + i * panel_width;
    for (int r = 0; r < MR; ++r) {
      const float a = x[r * ldx + i];
      for (int j = 0; j < panel_width; ++j) acc[r][j] += a * w[j];
    }
  }
  for (int r = 0; r < MR; ++r) {
    float* yr = y + r * ldy;
    for (std::int64_t j = 0; j < cols; ++j) yr[j] = accumulate ? yr[j] + acc[r][j] : acc[r][j];
  }
}

void panel_rows(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                std::int64_t ldy, std::int64_t cols, bool accumulate) {
  for (; mr >= 2; mr -= 2, x += 2 * ldx, y += 2 * ldy) panel_block<2>(x, ldx, k, panel, y, ldy, cols, accumulate);
  if (mr == 1) panel_block<1>(x, ldx, k, panel, y, ldy, cols, accumulate);
}

bool scores(const float* const* q, float* const* out, int nq, const float* keys, std::int64_t s, std::int64_t dh,
            float scale) {
  for (int j = 0; j < nq; ++j)
    for (std::int64_t t = 0; t < s; ++t) {
      float acc = 0;
      for (std::int64_t i = 0; i < dh; ++i) acc += q[j][i] * keys[t * dh + i];
      out[j][t] = acc * scale;
    }
  return true;
}

bool values(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s, std::int64_t dh,
            bool accumulate) {
  for (int j = 0; j < nq; ++j) {
    float* o = out[j];
    if (!accumulate) std::fill(o, o + dh, 0.0f);
    for (std::int64_t t = 0; t < s; ++t)
      for (std::int64_t i = 0; i < dh; ++i) o[i] += p[j][t] * vals[t * dh + i];
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

} // namespace

const decode_kernels portable_kernels{panel_rows, scores, values, temper, scan_row, uniform, candidates8};

const decode_kernels& kernels_for(decode_path p) {
  switch (p) {
    case decode_path::avx512: return avx512_kernels;
    case decode_path::avx2: return avx2_kernels;
    default: return portable_kernels;
  }
}

} // namespace leap::policy
