// expect: correct
// A block sum in two levels: cg::reduce over 128-thread tiles (block_tile_memory, tiles larger
// than a warp), the tile totals through shared memory, then the first warp reduces them with a
// mask computed at run time (__ballot_sync of the lanes that hold a total) and width-2 shuffles
// that read only lanes inside that mask; one atomicAdd per block.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kTiles = kThreads / 128;

__global__ void zero(float* out) { *out = 0.0f; }

__global__ void tile_sum(const float* x, float* out, int n) {
  __shared__ cg::block_tile_memory<kThreads> scratch;
  __shared__ float totals[kTiles];
  cg::thread_block block = cg::this_thread_block(scratch);
  auto tile = cg::tiled_partition<128>(block);
  float v = 0.0f;
  for (int i = blockIdx.x * kThreads + block.thread_rank(); i < n; i += gridDim.x * kThreads) v += x[i];
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) totals[tile.meta_group_rank()] = v;
  block.sync();
  const unsigned t = block.thread_rank();
  if (t < 32) {
    const unsigned holders = __ballot_sync(0xffffffffu, t < kTiles);
    if (t < kTiles) {
      float w = totals[t];
      for (int offset = kTiles / 2; offset > 0; offset /= 2) w += __shfl_down_sync(holders, w, offset, kTiles);
      if (t == 0) atomicAdd(out, w);
    }
  }
}

extern "C" void solution(const float* x, float* out, int n) {
  int blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 64) blocks = 64;
  zero<<<1, 1>>>(out);
  tile_sum<<<blocks, kThreads>>>(x, out, n);
  cudaDeviceSynchronize();
}
