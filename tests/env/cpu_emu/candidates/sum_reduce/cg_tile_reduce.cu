// expect: correct
// Cooperative groups at block and tile level: per-thread grid-stride sums, cg::reduce over each
// 32-thread tile, tile totals through shared memory, then the first tile finishes with shfl_down
// and one atomicAdd per block. Errors go through a cuda_check helper that exits, as real code does.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

static void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(EXIT_FAILURE);
  }
}

constexpr int kThreads = 256;

__global__ void tile_sum(const float* x, float* out, int n) {
  __shared__ float tile_totals[kThreads / 32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = 0.0f;
  for (int i = blockIdx.x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size()) v += x[i];
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) tile_totals[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? tile_totals[tile.thread_rank()] : 0.0f;
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
    if (tile.thread_rank() == 0) atomicAdd(out, v);
  }
}

extern "C" void solution(const float* x, float* out, int n) {
  cuda_check(cudaMemset(out, 0, sizeof(float)), "cudaMemset");
  int blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 512) blocks = 512;
  tile_sum<<<blocks, kThreads>>>(x, out, n);
  cuda_check(cudaGetLastError(), "tile_sum launch");
  cuda_check(cudaDeviceSynchronize(), "tile_sum");
}
