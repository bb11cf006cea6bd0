// Per-feature cost of the CUDA-on-CPU emulation: what each emulated CUDA feature adds. Each
// benchmark times two kernels alternately in one loop (thread CPU time; one-block grids run on
// the calling thread) and reports both and their ratio:
//   volatile_tail:    a 256-thread block reduction finished by the legacy volatile tail (lanes
//                     yield at every volatile access) vs the same finished with __shfl_down_sync
//   volatile_access:  one volatile shared access through leap_emu::vptr (lockstep) vs a plain
//                     volatile access, ns per access per thread
//   cg_tile_reduce:   cg::reduce(tile32, v, cg::plus) vs a hand-written __shfl_xor_sync loop
//   coalesced_threads:coalesced_threads() + group shfl vs a plain __shfl_sync broadcast
//   cp_async:         tiles staged into shared memory with cp.async vs plain float4 copies
//   rewrite_if:       the rewriter on a 400-line source whose features sit in #if blocks
//                     (evaluated) vs the same source with the directives blanked
// Kernels are written in the emulation's dialect (what the rewriter produces).
#include "bench/emulation_features.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <string>
#include <vector>

#include "env/cpu_emu/rewriter.hpp"

#include <cooperative_groups.h> // the emulation's shims (env/cpu_emu/include), after std headers
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include "bench/emulation_pair.hpp"

namespace cg = cooperative_groups;

namespace {

using leap::bench::pair;
using leap::bench::thread_cpu_seconds;

constexpr int k_block = 256;
constexpr int k_rounds = 16;  // repetitions of the measured part inside one launch


template <class K, class... A>
void launch1(const char* name, K kernel, unsigned smem, A... args) {
  leap::bench::launch_block(name, true, k_block, smem, kernel, args...);
}

// --- volatile tail vs shuffle tail -------------------------------------------------------------
void reduce_volatile_tail(const float* x, float* out) {
  static thread_local float s[k_block];
  const unsigned t = threadIdx.x;
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    s[t] = x[t];
    __syncthreads();
    for (unsigned h = k_block / 2; h > 32; h >>= 1) {
      if (t < h) s[t] += s[t + h];
      __syncthreads();
    }
    if (t < 32) {
      leap_emu::vptr<float> v(s);
      v[t] += v[t + 32]; v[t] += v[t + 16]; v[t] += v[t + 8];
      v[t] += v[t + 4];  v[t] += v[t + 2];  v[t] += v[t + 1];
    }
    __syncthreads();
    acc += s[0];
    __syncthreads();
  }
  if (t == 0) out[0] = acc;
}

void reduce_shuffle_tail(const float* x, float* out) {
  static thread_local float s[k_block];
  const unsigned t = threadIdx.x;
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    s[t] = x[t];
    __syncthreads();
    for (unsigned h = k_block / 2; h > 32; h >>= 1) {
      if (t < h) s[t] += s[t + h];
      __syncthreads();
    }
    if (t < 32) {
      float w = s[t] + s[t + 32];
      for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffffu, w, o);
      if (t == 0) s[0] = w;
    }
    __syncthreads();
    acc += s[0];
    __syncthreads();
  }
  if (t == 0) out[0] = acc;
}

// --- one volatile access: lockstep pointer vs plain volatile ------------------------------------
constexpr int k_accesses = 64;
void volatile_lockstep(float* out) {
  static thread_local float s[k_block];
  leap_emu::vptr<float> v(s);
  const unsigned t = threadIdx.x;
  v[t] = 1.0f;
  for (int k = 0; k < k_accesses - 1; ++k) v[t] = v[t] * 0.5f;  // read + write per step, counted as 2
  out[t] = s[t];
}
void volatile_plain(float* out) {
  static thread_local float s[k_block];
  volatile float* v = s;
  const unsigned t = threadIdx.x;
  v[t] = 1.0f;
  for (int k = 0; k < k_accesses - 1; ++k) v[t] = v[t] * 0.5f;
  __syncwarp();  // both kernels take the fiber path with one warp operation
  out[t] = s[t];
}

// --- cooperative groups tile reduce vs raw shuffles ---------------------------------------------
void cg_tile_reduce(const float* x, float* out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) acc += cg::reduce(tile, x[threadIdx.x] + r, cg::plus<float>());
  out[threadIdx.x] = acc;
}
void raw_shfl_reduce(const float* x, float* out) {
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    float v = x[threadIdx.x] + r;
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    acc += v;
  }
  out[threadIdx.x] = acc;
}

// --- coalesced_threads() vs a plain broadcast ---------------------------------------------------
void coalesced_broadcast(const float* x, float* out) {
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    cg::coalesced_group g = cg::coalesced_threads();
    acc += g.shfl(x[threadIdx.x], 0);
  }
  out[threadIdx.x] = acc;
}
void plain_broadcast(const float* x, float* out) {
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    __syncwarp();  // the same number of warp operations as the coalesced version
    acc += __shfl_sync(0xffffffffu, x[threadIdx.x], 0);
  }
  out[threadIdx.x] = acc;
}

// --- cp.async staging vs plain copies ------------------------------------------------------------
void stage_cp_async(const float4* in, float4* out) {
  static thread_local float4 tile[k_block];
  const unsigned t = threadIdx.x;
  float4 acc = make_float4(0, 0, 0, 0);
  for (int r = 0; r < k_rounds; ++r) {
    leap_emu::ptx::cp_async(__cvta_generic_to_shared(&tile[t]), reinterpret_cast<const char*>(in + t), 16, 16);
    leap_emu::ptx::cp_async_wait_all(); // the copy lands in shared memory at the wait
    __syncthreads();
    acc.x += tile[k_block - 1 - t].x;
    __syncthreads();
  }
  out[t] = acc;
}
void stage_plain(const float4* in, float4* out) {
  static thread_local float4 tile[k_block];
  const unsigned t = threadIdx.x;
  float4 acc = make_float4(0, 0, 0, 0);
  for (int r = 0; r < k_rounds; ++r) {
    tile[t] = in[t];
    __syncthreads();
    acc.x += tile[k_block - 1 - t].x;
    __syncthreads();
  }
  out[t] = acc;
}

// Alternates `a` and `b`; counters: microseconds per launch of each and b/a... reported as ratio
// = a / b (the feature's time over the baseline's).

struct buffers {
  std::vector<float> x = std::vector<float>(4 * k_block, 1.0f);
  std::vector<float> out = std::vector<float>(4 * k_block, 0.0f);
  float* xp() { return x.data(); }
  float* op() { return out.data(); }
  const float4* x4() { return reinterpret_cast<const float4*>(x.data()); }
  float4* o4() { return reinterpret_cast<float4*>(out.data()); }
};

void bm_volatile_tail(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("reduce_volatile_tail", reduce_volatile_tail, 0, b.xp(), b.op()); },
       [&] { launch1("reduce_shuffle_tail", reduce_shuffle_tail, 0, b.xp(), b.op()); }, 1, nullptr);
}
void bm_volatile_access(benchmark::State& state) {
  buffers b;
  // 2 accesses per step plus the first write, per thread of the block
  pair(state, [&] { launch1("volatile_lockstep", volatile_lockstep, 0, b.op()); },
       [&] { launch1("volatile_plain", volatile_plain, 0, b.op()); }, double(k_block) * (2 * k_accesses - 1),
       "ns_per_access_thread");
}
void bm_cg_tile_reduce(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("cg_tile_reduce", cg_tile_reduce, 0, b.xp(), b.op()); },
       [&] { launch1("raw_shfl_reduce", raw_shfl_reduce, 0, b.xp(), b.op()); }, 1, nullptr);
}
void bm_coalesced(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("coalesced_broadcast", coalesced_broadcast, 0, b.xp(), b.op()); },
       [&] { launch1("plain_broadcast", plain_broadcast, 0, b.xp(), b.op()); }, double(k_block) * k_rounds,
       "ns_per_call_thread");
}
void bm_cp_async(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("stage_cp_async", stage_cp_async, 0, b.x4(), b.o4()); },
       [&] { launch1("stage_plain", stage_plain, 0, b.x4(), b.o4()); }, double(k_block) * k_rounds,
       "ns_per_copy_thread");
}

// A candidate-sized source repeated: each block of features behind #if, or with blank lines
// where the directives were (same line count, same tokens otherwise).
std::string preprocessed_source(bool directives) {
  std::string s;
  for (int k = 0; k < 40; ++k) {
    const std::string n = std::to_string(k);
    s += directives ? "#if defined(USE_HALF_" + n + ") && __CUDA_ARCH__ >= 800\n" : "\n";
    s += "__device__ float f" + n + "(float v) { return v * 2; }\n";
    s += directives ? "#else\n" : "\n";
    s += "__global__ void k" + n + "(const float* x, float* y, int n) {\n";
    s += "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = x[i] + 1;\n}\n";
    s += directives ? "#endif\n" : "\n";
    s += "// comment line\n";
  }
  return s;
}

void bm_rewrite_if(benchmark::State& state) {
  const std::string with = preprocessed_source(true), without = preprocessed_source(false);
  double ta = 0, tb = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    auto a = leap::emu::rewrite_cuda_source(with, "with.cu");
    const double t1 = thread_cpu_seconds();
    auto b = leap::emu::rewrite_cuda_source(without, "without.cu");
    const double t2 = thread_cpu_seconds();
    benchmark::DoNotOptimize(a.code.size() + b.code.size());
    ta += t1 - t0;
    tb += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["us_feature"] = ta / n * 1e6;
  state.counters["us_baseline"] = tb / n * 1e6;
  state.counters["ratio"] = tb > 0 ? ta / tb : 0;
}

} // namespace

namespace leap::bench {

void register_emulation_feature_benchmarks() {
  benchmark::RegisterBenchmark("emu/feature/volatile_tail", bm_volatile_tail)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/feature/volatile_access", bm_volatile_access)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/feature/cg_tile_reduce", bm_cg_tile_reduce)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/feature/coalesced_threads", bm_coalesced)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/feature/cp_async", bm_cp_async)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/feature/rewrite_if", bm_rewrite_if)->Unit(benchmark::kMicrosecond);
}

} // namespace leap::bench
