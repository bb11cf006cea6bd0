// Reference for task mish: naive and correct, one thread per element, softplus(x) = x above 20.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void mish_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    const float sp = v > 20.0f ? v : log1pf(expf(v));
    y[i] = v * tanhf(sp);
  }
}

extern "C" void solution(const float* x, float* y, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  mish_kernel<<<grid, block>>>(x, y, n);
  cudaDeviceSynchronize();
}
