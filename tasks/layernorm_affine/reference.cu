// Reference for task layernorm_affine: naive and correct, one thread per row, two passes in
// double, the affine transform and the scale[0] factor applied in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void layernorm_affine_kernel(const float* x, const float* gamma, const float* beta,
                                        const float* scale, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (long long)r * cols;
  float* yr = y + (long long)r * cols;
  double mean = 0.0;
  for (int j = 0; j < cols; ++j) mean += xr[j];
  mean /= cols;
  double var = 0.0;
  for (int j = 0; j < cols; ++j) {
    const double d = xr[j] - mean;
    var += d * d;
  }
  var /= cols;
  const double inv_std = 1.0 / sqrt(var + 1e-5);
  const double sc = scale[0];
  for (int j = 0; j < cols; ++j) {
    yr[j] = (float)(((xr[j] - mean) * inv_std * gamma[j] + beta[j]) * sc);
  }
}

extern "C" void solution(const float* x, const float* gamma, const float* beta,
                         const float* scale, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (rows + block - 1) / block;
  layernorm_affine_kernel<<<grid, block>>>(x, gamma, beta, scale, y, rows, cols);
  cudaDeviceSynchronize();
}
