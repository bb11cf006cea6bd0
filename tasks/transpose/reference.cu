// Reference for task transpose: naive and correct, one thread per element on a 2-D grid.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void transpose_kernel(const float* x, float* y, int rows, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;  // column of x
  int i = blockIdx.y * blockDim.y + threadIdx.y;  // row of x
  if (i < rows && j < cols) y[j * rows + i] = x[i * cols + j];
}

extern "C" void solution(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  dim3 block(16, 16);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  transpose_kernel<<<grid, block>>>(x, y, rows, cols);
  cudaDeviceSynchronize();
}
