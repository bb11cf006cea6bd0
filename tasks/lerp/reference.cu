// Reference for task lerp: naive and correct, one thread per element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void lerp_kernel(const float* a, const float* b, const float* w, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = a[i] + w[i] * (b[i] - a[i]);
  }
}

extern "C" void solution(const float* a, const float* b, const float* w, float* out, int n) {
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  lerp_kernel<<<grid, block>>>(a, b, w, out, n);
  cudaDeviceSynchronize();
}
