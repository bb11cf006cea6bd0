// Reference for task hardswish: naive and correct, one thread per element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void hardswish_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f;
  }
}

extern "C" void solution(const float* x, float* y, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  hardswish_kernel<<<grid, block>>>(x, y, n);
  cudaDeviceSynchronize();
}
