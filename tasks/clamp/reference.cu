// Reference for task clamp: naive and correct, one thread per element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void clamp_kernel(const float* lo, const float* hi, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = fminf(fmaxf(x[i], lo[0]), hi[0]);
  }
}

extern "C" void solution(const float* lo, const float* hi, const float* x, float* y, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  clamp_kernel<<<grid, block>>>(lo, hi, x, y, n);
  cudaDeviceSynchronize();
}
