// Reference for task rmsnorm_rows: naive and correct, one thread per row, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void rmsnorm_rows_kernel(const float* x, const float* weight, float* y, int rows,
                                    int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (long long)r * cols;
  float* yr = y + (long long)r * cols;
  double ms = 0.0;
  for (int j = 0; j < cols; ++j) ms += (double)xr[j] * xr[j];
  ms /= cols;
  const double inv_rms = 1.0 / sqrt(ms + 1e-6);
  for (int j = 0; j < cols; ++j) yr[j] = (float)(xr[j] * inv_rms * weight[j]);
}

extern "C" void solution(const float* x, const float* weight, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (rows + block - 1) / block;
  rmsnorm_rows_kernel<<<grid, block>>>(x, weight, y, rows, cols);
  cudaDeviceSynchronize();
}
