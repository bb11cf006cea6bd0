// expect: runtime_error
// Deadlocks in the CPU emulation: inside every warp, lanes 0-15 wait in a full-mask shuffle (a
// warp barrier that needs lanes 16-31) while lanes 16-31 wait in __syncthreads (a block barrier
// that needs lanes 0-15). No thread can move, so the emulation reports threads stuck at a barrier.
// On a real GPU this divergent use of __shfl_xor_sync(0xffffffff) and __syncthreads is undefined
// behaviour (it may hang, or give garbage); this candidate is meant for the CPU backend.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_divergent(const float* x, float* y, int rows, int cols) {
  __shared__ float row_max[32];
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x;
  const float* xr = x + (long long)row * cols;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
  if (lane < 16) {
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));  // waits for lanes 16-31 forever
  } else {
    __syncthreads();  // waits for lanes 0-15 forever
  }
  if (lane == 0) row_max[threadIdx.x / 32] = m;
  __syncthreads();
  float block_max = row_max[0];
  for (int w = 1; w < (int)(blockDim.x / 32); ++w) block_max = fmaxf(block_max, row_max[w]);
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += expf(xr[j] - block_max);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    y[(long long)row * cols + j] = expf(xr[j] - block_max) / s;
  }
}

extern "C" void solution(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  softmax_divergent<<<rows, 128>>>(x, y, rows, cols);
  cudaDeviceSynchronize();
}
