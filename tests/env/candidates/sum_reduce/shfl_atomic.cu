// expect: correct
// Block reduction: grid-stride partial sums per thread, __shfl_down_sync within each warp, warp
// totals through shared memory, the first warp reduces those, and one atomicAdd per block into
// out[0] (zeroed first with cudaMemset, since the output is not zeroed for us).
#include <cuda_runtime.h>

constexpr int k_block = 256;
constexpr int k_warp = 32;

__device__ float warp_reduce_sum(float v) {
  for (int offset = k_warp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

__global__ void sum_kernel(const float* x, float* out, int n) {
  __shared__ float warp_totals[k_block / k_warp];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    v += x[i];
  }
  v = warp_reduce_sum(v);
  const int lane = threadIdx.x % k_warp;
  const int warp = threadIdx.x / k_warp;
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < k_block / k_warp ? warp_totals[lane] : 0.0f;
    v = warp_reduce_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

extern "C" void solution(const float* x, float* out, int n) {
  cudaMemset(out, 0, sizeof(float));
  if (n <= 0) return;
  int grid = (n + k_block - 1) / k_block;
  if (grid > 1024) grid = 1024;
  sum_kernel<<<grid, k_block>>>(x, out, n);
  cudaDeviceSynchronize();
}
