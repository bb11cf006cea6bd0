// Reference for task row_sum: naive and correct, one thread per row, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void row_sum_kernel(const float* x, float* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (long long)r * cols;
  double acc = 0.0;
  for (int j = 0; j < cols; ++j) acc += xr[j];
  out[r] = (float)acc;
}

extern "C" void solution(const float* x, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (rows + block - 1) / block;
  row_sum_kernel<<<grid, block>>>(x, out, rows, cols);
  cudaDeviceSynchronize();
}
