// Reference for task col_max: naive and correct, one thread per column.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void col_max_kernel(const float* x, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float m = x[c];
  for (int i = 1; i < rows; ++i) m = fmaxf(m, x[(long long)i * cols + c]);
  out[c] = m;
}

extern "C" void solution(const float* x, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (cols + block - 1) / block;
  col_max_kernel<<<grid, block>>>(x, out, rows, cols);
  cudaDeviceSynchronize();
}
