// expect: correct
// One warp per row (4 rows per 128-thread block): each lane strides over the row, then the warp
// combines with __shfl_xor_sync butterflies for the maximum and __shfl_down_sync for the sum.
// Correct for any cols (lanes past the row end contribute -inf / 0).
#include <cuda_runtime.h>
#include <math.h>

constexpr int k_warp = 32;
constexpr int k_rows_per_block = 4;

__device__ float warp_max(float v) {
  for (int offset = k_warp / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;  // every lane holds the maximum
}

__device__ float warp_sum(float v) {
  for (int offset = k_warp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return __shfl_sync(0xffffffffu, v, 0);  // broadcast lane 0's total
}

__global__ void softmax_warp(const float* x, float* y, int rows, int cols) {
  const int lane = threadIdx.x % k_warp;
  const int row = blockIdx.x * k_rows_per_block + threadIdx.x / k_warp;
  if (row >= rows) return;  // the whole warp leaves together
  const float* xr = x + (long long)row * cols;
  float* yr = y + (long long)row * cols;

  float m = -INFINITY;
  for (int j = lane; j < cols; j += k_warp) m = fmaxf(m, xr[j]);
  m = warp_max(m);

  float s = 0.0f;
  for (int j = lane; j < cols; j += k_warp) s += expf(xr[j] - m);
  s = warp_sum(s);

  const float inv = 1.0f / s;
  for (int j = lane; j < cols; j += k_warp) yr[j] = expf(xr[j] - m) * inv;
}

extern "C" void solution(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int grid = (rows + k_rows_per_block - 1) / k_rows_per_block;
  softmax_warp<<<grid, k_warp * k_rows_per_block>>>(x, y, rows, cols);
  cudaDeviceSynchronize();
}
