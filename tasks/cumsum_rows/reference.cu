// Reference for task cumsum_rows: naive and correct, one thread per row, running sum in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void cumsum_rows_kernel(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (long long)r * cols;
  float* yr = y + (long long)r * cols;
  double sum = 0.0;
  for (int j = 0; j < cols; ++j) {
    sum += (double)xr[j];
    yr[j] = (float)sum;
  }
}

extern "C" void solution(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (rows + block - 1) / block;
  cumsum_rows_kernel<<<grid, block>>>(x, y, rows, cols);
  cudaDeviceSynchronize();
}
