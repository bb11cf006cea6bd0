// Cost benchmarks of the CPU emulation's asynchronous copies, run-time warp masks and tiles
// larger than a warp. Each benchmark times two kernels alternately in one loop (thread CPU time;
// one-block grids of 256 threads run on the calling thread) and reports both and their ratio:
//   cp_async_groups:  16-byte cp.async copies kept pending per thread and performed at
//                     cp.async.wait_group 0 (commit + wait each round) vs the immediate copy the
//                     emulation made before (a plain float4 store), ns per copy per thread
//   runtime_mask_shfl:__activemask() then a 5-step __shfl_xor_sync reduction with that mask vs
//                     the same reduction with the constant full mask, ns per round per thread
//   tile64_reduce:    cg::reduce over a 64-thread tile (a barrier of two warps) vs over a
//                     32-thread tile (warp shuffles)
// Kernels are written in the emulation's dialect (what the rewriter produces). Registered once
// from bench_emulation's main thread.
#include "bench/emulation_features.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <vector>

#include <cooperative_groups.h>  // the emulation's shims (env/cpu_emu/include), after std headers
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include "bench/emulation_pair.hpp"

namespace cg = cooperative_groups;

namespace {

using leap::bench::pair;

constexpr int k_block = 256;
constexpr int k_rounds = 16;


template <class K, class... A>
void launch1(const char* name, K kernel, A... args) {
  leap::bench::launch_block(name, true, k_block, 0, kernel, args...);
}

// --- pending cp.async groups vs an immediate copy -------------------------------------------
void stage_pending(const float4* in, float4* out) {
  static thread_local float4 tile[k_block];
  const unsigned t = threadIdx.x;
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    leap_emu::ptx::cp_async(__cvta_generic_to_shared(&tile[t]), reinterpret_cast<const char*>(in + t), 16, 16);
    leap_emu::ptx::cp_async_commit();
    leap_emu::ptx::cp_async_wait_group(0);
    __syncthreads();
    acc += tile[k_block - 1 - t].x;
    __syncthreads();
  }
  out[t].x = acc;
}
void stage_immediate(const float4* in, float4* out) {
  static thread_local float4 tile[k_block];
  const unsigned t = threadIdx.x;
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    tile[t] = in[t];
    __syncthreads();
    acc += tile[k_block - 1 - t].x;
    __syncthreads();
  }
  out[t].x = acc;
}

// --- a run-time mask vs the full mask -------------------------------------------------------
void shfl_runtime_mask(const float* x, float* out) {
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    const unsigned m = __activemask();
    float v = x[threadIdx.x] + r;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(m, v, o);
    acc += v;
  }
  out[threadIdx.x] = acc;
}
void shfl_full_mask(const float* x, float* out) {
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) {
    float v = x[threadIdx.x] + r;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    acc += v;
  }
  out[threadIdx.x] = acc;
}

// --- 64-thread tile vs 32-thread tile -------------------------------------------------------
void tile64_reduce(const float* x, float* out) {
  auto tile = cg::tiled_partition<64>(cg::this_thread_block());
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) acc += cg::reduce(tile, x[threadIdx.x] + r, cg::plus<float>());
  out[threadIdx.x] = acc;
}
void tile32_reduce(const float* x, float* out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  float acc = 0;
  for (int r = 0; r < k_rounds; ++r) acc += cg::reduce(tile, x[threadIdx.x] + r, cg::plus<float>());
  out[threadIdx.x] = acc;
}


struct buffers {
  std::vector<float> x = std::vector<float>(4 * k_block, 1.0f);
  std::vector<float> out = std::vector<float>(4 * k_block, 0.0f);
  float* xp() { return x.data(); }
  float* op() { return out.data(); }
  const float4* x4() { return reinterpret_cast<const float4*>(x.data()); }
  float4* o4() { return reinterpret_cast<float4*>(out.data()); }
};

void bm_cp_async_groups(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("stage_pending", stage_pending, b.x4(), b.o4()); },
       [&] { launch1("stage_immediate", stage_immediate, b.x4(), b.o4()); }, double(k_block) * k_rounds,
       "ns_per_copy_thread");
}
void bm_runtime_mask(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("shfl_runtime_mask", shfl_runtime_mask, b.xp(), b.op()); },
       [&] { launch1("shfl_full_mask", shfl_full_mask, b.xp(), b.op()); }, double(k_block) * k_rounds,
       "ns_per_round_thread");
}
void bm_tile64(benchmark::State& state) {
  buffers b;
  pair(state, [&] { launch1("tile64_reduce", tile64_reduce, b.xp(), b.op()); },
       [&] { launch1("tile32_reduce", tile32_reduce, b.xp(), b.op()); }, double(k_block) * k_rounds,
       "ns_per_reduce_thread");
}

}  // namespace

namespace leap::bench {

void register_emulation_async_masks_benchmarks() {
  benchmark::RegisterBenchmark("emu/async_masks/cp_async_groups", bm_cp_async_groups)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/async_masks/runtime_mask_shfl", bm_runtime_mask)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/async_masks/tile64_reduce", bm_tile64)->Unit(benchmark::kMicrosecond);
}

}  // namespace leap::bench
