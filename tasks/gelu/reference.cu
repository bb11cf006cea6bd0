// Reference for task gelu (tanh approximation): naive and correct, one thread per element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void gelu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    const float k_sqrt_2_over_pi = 0.7978845608028654f;
    const float inner = k_sqrt_2_over_pi * (v + 0.044715f * v * v * v);
    y[i] = 0.5f * v * (1.0f + tanhf(inner));
  }
}

extern "C" void solution(const float* x, float* y, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  gelu_kernel<<<grid, block>>>(x, y, n);
  cudaDeviceSynchronize();
}
