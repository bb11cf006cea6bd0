// Reference for task leaky_relu: naive and correct, one thread per element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void leaky_relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
  }
}

extern "C" void solution(const float* x, float* y, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  leaky_relu_kernel<<<grid, block>>>(x, y, n);
  cudaDeviceSynchronize();
}
