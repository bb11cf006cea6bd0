// Reference for task col_sum: naive and correct, one thread per column, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void col_sum_kernel(const float* x, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  double acc = 0.0;
  for (int i = 0; i < rows; ++i) acc += x[(long long)i * cols + c];
  out[c] = (float)acc;
}

extern "C" void solution(const float* x, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (cols + block - 1) / block;
  col_sum_kernel<<<grid, block>>>(x, out, rows, cols);
  cudaDeviceSynchronize();
}
