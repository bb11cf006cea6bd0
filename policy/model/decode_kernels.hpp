// decode_kernels: the float loops of the fused decode step (decode_step.cpp) and of
// multinomial_one (multinomial_one.cpp), one table per decode_path: portable C++
// (decode_kernels_portable.cpp), AVX2 + FMA (decode_kernels_avx2.cpp), AVX-512
// (decode_kernels_avx512.cpp). Internal to policy/: only those files include it. No LibTorch.
//
// Every table computes the same values up to float32 rounding of reordered sums and of their exp
// (one polynomial, within 2 ulp of expf; the multinomial loops: exactly the same). A vector table may only be called on a CPU that has its instruction
// set (cpu_supports); kernels_for picks the table of a path and says nothing about that.
// Threads: pure functions over the caller's buffers; any thread.
#pragma once

#include "policy/model/decode_path.hpp"

#include <cstdint>

namespace leap::policy {

// Weights are packed into panels of this many columns ([ceil(N/32), K, 32], pack_weight): two
// AVX-512 vectors of float or four AVX2 ones.
constexpr std::int64_t panel_width = 32;

struct decode_kernels {
  // One panel, mr (1..8) rows: y[0..mr, 0..cols) (+)= x[0..mr, 0..k) . panel[k, 32]; x and y row
  // strides ldx and ldy.
  void (*panel_rows)(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                     std::int64_t ldy, std::int64_t cols, bool accumulate);
  // Attention over the keys of one KV head for the nq queries that share it (q[i] and out[i] of
  // size dh): scores out[i][t] = q[i] . keys[t] * scale for t < s; values out[i] (+)= sum_t
  // p[i][t] * vals[t]. Keys and values [s, dh]. False, doing nothing, for a dh the table has no
  // vector loop for (the caller then uses the portable table's, which takes any dh).
  bool (*scores)(const float* const* q, float* const* out, int nq, const float* keys, std::int64_t s,
                 std::int64_t dh, float scale);
  bool (*values)(const float* const* p, float* const* out, int nq, const float* vals, std::int64_t s,
                 std::int64_t dh, bool accumulate);
  // Softmax of each of `rows` rows of n floats, in place: exp(x - the row's maximum) over their
  // sum, as torch::softmax computes it; masked entries (lowest()) give 0.
  void (*softmax_rows)(float* x, std::int64_t rows, std::int64_t n);
  // SwiGLU's activation: out[r, i] = silu(gu[r, i]) * gu[r, f + i] for i < f, gu [rows, 2f] (the
  // gate half, then the up half), out [rows, f]; silu(g) = g / (1 + exp(-g)) as torch::silu.
  void (*silu_mul)(const float* gu, std::int64_t rows, std::int64_t f, float* out);
  // Mersenne Twister tempering of n state words (at::mt19937's output function).
  void (*temper)(const std::uint32_t* in, std::uint32_t* out, std::int64_t n);
  // Multinomial's row check (every entry finite and >= 0) and `first`, the first index of the
  // row's maximum; false when the check fails.
  bool (*scan_row)(const float* row, std::int64_t v, std::int64_t& first);
  // u[i] = uniform_real<double>(0, 1) of the 64-bit draw (bits[2i] << 32 | bits[2i+1]).
  void (*uniform)(const std::uint32_t* bits, double* u, std::int64_t v);
  // Bit j (j < 8): entry j might beat `best`: !(p[j] * slack < best * u[j]) in double.
  unsigned (*candidates8)(const float* p, const double* u, double best, double slack);
};

extern const decode_kernels portable_kernels;
// The AVX2 softmax and SwiGLU loops, which the AVX-512 table shares (every AVX-512 CPU has AVX2
// and FMA; their exp is a cheap share of the step).
void softmax_rows_avx2(float* x, std::int64_t rows, std::int64_t n);
void silu_mul_avx2(const float* gu, std::int64_t rows, std::int64_t f, float* out);
extern const decode_kernels avx2_kernels;
extern const decode_kernels avx512_kernels;

// The table of `p` (libtorch: the portable one, for the prefill and multinomial_one).
const decode_kernels& kernels_for(decode_path p);

} // namespace leap::policy
