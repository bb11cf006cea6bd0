// Cost benchmarks of the CPU emulation's half and bfloat16 types (shim <cuda_fp16.h> /
// <cuda_bf16.h>): each times a kernel doing the work in 16-bit types against the same work in
// float, alternately in one loop (thread CPU time of a one-block launch on the plain-loop path,
// as a candidate without barriers runs), and reports both, their ratio and ns per operation:
//   half2_fma:   64 __hfma2 per thread on half2 (each lane rounded once from the exact a*b+c)
//                vs 64 fmaf pairs on float2
//   half2_add:   64 __hadd2 (float add, one rounding to half) vs 64 float2 adds
//   bf162_fma:   64 __hfma2 on __nv_bfloat162 vs 64 fmaf pairs
//   convert:     __float22half2_rn + __half22float2 round trips vs float2 copies
// Kernels are written in the emulation's dialect (what the rewriter produces).
#include "bench/emulation_features.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <vector>

#include <cuda_runtime.h>  // the emulation's shims (env/cpu_emu/include), after std headers
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "bench/emulation_pair.hpp"

namespace {


constexpr int k_block = 256;
constexpr int k_ops = 64;  // operations per thread and launch


template <class K, class... A>
void launch_plain(const char* name, K kernel, A... args) {
  leap::bench::launch_block(name, false, k_block, 0, kernel, args...);
}

void half2_fma(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  const half2 a = __float22half2_rn(x[t]), b = __floats2half2_rn(0.5f, -0.25f);
  half2 acc = __float2half2_rn(0.0f);
  for (int k = 0; k < k_ops; ++k) acc = __hfma2(a, b, acc);
  out[t] = __half22float2(acc);
}
void float2_fma(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  const float2 a = x[t], b = make_float2(0.5f, -0.25f);
  float2 acc = make_float2(0.0f, 0.0f);
  for (int k = 0; k < k_ops; ++k) acc = make_float2(fmaf(a.x, b.x, acc.x), fmaf(a.y, b.y, acc.y));
  out[t] = acc;
}
void half2_add(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  const half2 a = __float22half2_rn(x[t]);
  half2 acc = __float2half2_rn(0.0f);
  for (int k = 0; k < k_ops; ++k) acc = __hadd2(acc, a);
  out[t] = __half22float2(acc);
}
void float2_add(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  const float2 a = x[t];
  float2 acc = make_float2(0.0f, 0.0f);
  for (int k = 0; k < k_ops; ++k) acc = make_float2(acc.x + a.x, acc.y + a.y);
  out[t] = acc;
}
void bf162_fma(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  const __nv_bfloat162 a = __float22bfloat162_rn(x[t]), b = __floats2bfloat162_rn(0.5f, -0.25f);
  __nv_bfloat162 acc = __float2bfloat162_rn(0.0f);
  for (int k = 0; k < k_ops; ++k) acc = __hfma2(a, b, acc);
  out[t] = __bfloat1622float2(acc);
}
void half2_convert(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  float2 v = x[t];
  for (int k = 0; k < k_ops; ++k) v = __half22float2(__float22half2_rn(make_float2(v.y, v.x)));
  out[t] = v;
}
void float2_copy(const float2* x, float2* out) {
  const unsigned t = threadIdx.x;
  float2 v = x[t];
  for (int k = 0; k < k_ops; ++k) {
    v = make_float2(v.y, v.x);
    benchmark::DoNotOptimize(v);
  }
  out[t] = v;
}

// Alternates the 16-bit kernel and the float one; ratio = 16-bit time / float time.

// leap::bench::pair, plus the time of one 16-bit and one float operation per thread.
template <class A, class B>
void pair16(benchmark::State& state, A a, B b) {
  if (!leap::bench::pair(state, a, b))
    return;
  const double ops = double(k_block) * k_ops;
  state.counters["ns_per_op_16bit"] = state.counters["us_feature"] * 1e3 / ops;
  state.counters["ns_per_op_float"] = state.counters["us_baseline"] * 1e3 / ops;
}

struct buffers {
  std::vector<float2> x = std::vector<float2>(k_block, make_float2(0.75f, -1.5f));
  std::vector<float2> out = std::vector<float2>(k_block);
};

void bm_half2_fma(benchmark::State& state) {
  buffers b;
  pair16(state, [&] { launch_plain("half2_fma", half2_fma, b.x.data(), b.out.data()); },
       [&] { launch_plain("float2_fma", float2_fma, b.x.data(), b.out.data()); });
}
void bm_half2_add(benchmark::State& state) {
  buffers b;
  pair16(state, [&] { launch_plain("half2_add", half2_add, b.x.data(), b.out.data()); },
       [&] { launch_plain("float2_add", float2_add, b.x.data(), b.out.data()); });
}
void bm_bf162_fma(benchmark::State& state) {
  buffers b;
  pair16(state, [&] { launch_plain("bf162_fma", bf162_fma, b.x.data(), b.out.data()); },
       [&] { launch_plain("float2_fma", float2_fma, b.x.data(), b.out.data()); });
}
void bm_convert(benchmark::State& state) {
  buffers b;
  pair16(state, [&] { launch_plain("half2_convert", half2_convert, b.x.data(), b.out.data()); },
       [&] { launch_plain("float2_copy", float2_copy, b.x.data(), b.out.data()); });
}

} // namespace

namespace leap::bench {

void register_emulation_half_benchmarks() {
  benchmark::RegisterBenchmark("emu/half/half2_fma", bm_half2_fma)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/half/half2_add", bm_half2_add)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/half/bf162_fma", bm_bf162_fma)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/half/convert", bm_convert)->Unit(benchmark::kMicrosecond);
}

} // namespace leap::bench
