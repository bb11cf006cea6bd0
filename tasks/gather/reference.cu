// Reference for task gather: naive and correct, one thread per output element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void gather_kernel(const float* x, const int* idx, float* out, int n_src, int n_out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n_out) {
    const int j = idx[i];
    out[i] = (j >= 0 && j < n_src) ? x[j] : 0.0f;
  }
}

extern "C" void solution(const float* x, const int* idx, float* out, int n_src, int n_out) {
  if (n_out <= 0) return;
  const int block = 256;
  const int grid = (n_out + block - 1) / block;
  gather_kernel<<<grid, block>>>(x, idx, out, n_src, n_out);
  cudaDeviceSynchronize();
}
