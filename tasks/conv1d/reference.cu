// Reference for task conv1d (valid cross-correlation): one thread per output, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void conv1d_kernel(const float* x, const float* w, float* y, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int out_len = n - k + 1;
  if (i >= out_len) return;
  double acc = 0.0;
  for (int j = 0; j < k; ++j) acc += (double)x[i + j] * w[j];
  y[i] = (float)acc;
}

extern "C" void solution(const float* x, const float* w, float* y, int n, int k) {
  const int out_len = n - k + 1;
  if (out_len <= 0) return;
  const int block = 256;
  const int grid = (out_len + block - 1) / block;
  conv1d_kernel<<<grid, block>>>(x, w, y, n, k);
  cudaDeviceSynchronize();
}
