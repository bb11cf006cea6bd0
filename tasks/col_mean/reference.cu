// Reference for task col_mean: naive and correct, one thread per column, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void col_mean_kernel(const float* x, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  double sum = 0.0;
  for (int r = 0; r < rows; ++r) sum += (double)x[(long long)r * cols + c];
  out[c] = (float)(sum / rows);
}

extern "C" void solution(const float* x, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (cols + block - 1) / block;
  col_mean_kernel<<<grid, block>>>(x, out, rows, cols);
  cudaDeviceSynchronize();
}
