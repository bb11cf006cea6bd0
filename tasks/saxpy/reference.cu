// Reference for task saxpy: naive and correct, one thread per element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void saxpy_kernel(const float* alpha, const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = alpha[0] * x[i] + y[i];
  }
}

extern "C" void solution(const float* alpha, const float* x, const float* y, float* out, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  saxpy_kernel<<<grid, block>>>(alpha, x, y, out, n);
  cudaDeviceSynchronize();
}
