// Reference for task log_softmax_rows: naive and correct, one thread per row, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void log_softmax_rows_kernel(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (long long)r * cols;
  float* yr = y + (long long)r * cols;
  float m = xr[0];
  for (int j = 1; j < cols; ++j) m = fmaxf(m, xr[j]);
  double sum = 0.0;
  for (int j = 0; j < cols; ++j) sum += exp((double)xr[j] - m);
  const double lse = log(sum);
  for (int j = 0; j < cols; ++j) yr[j] = (float)((double)xr[j] - m - lse);
}

extern "C" void solution(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (rows + block - 1) / block;
  log_softmax_rows_kernel<<<grid, block>>>(x, y, rows, cols);
  cudaDeviceSynchronize();
}
