// Reference for task batchnorm: naive and correct, one thread per channel, two passes in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void batchnorm_kernel(const float* x, const float* gamma, const float* beta, float* y,
                                 int N, int C) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  double mean = 0.0;
  for (int n = 0; n < N; ++n) mean += x[(long long)n * C + c];
  mean /= N;
  double var = 0.0;
  for (int n = 0; n < N; ++n) {
    const double d = x[(long long)n * C + c] - mean;
    var += d * d;
  }
  var /= N;
  const double inv_std = 1.0 / sqrt(var + 1e-5);
  for (int n = 0; n < N; ++n) {
    const long long k = (long long)n * C + c;
    y[k] = (float)((x[k] - mean) * inv_std * gamma[c] + beta[c]);
  }
}

extern "C" void solution(const float* x, const float* gamma, const float* beta, float* y, int N,
                         int C) {
  if (N <= 0 || C <= 0) return;
  const int block = 128;
  const int grid = (C + block - 1) / block;
  batchnorm_kernel<<<grid, block>>>(x, gamma, beta, y, N, C);
  cudaDeviceSynchronize();
}
