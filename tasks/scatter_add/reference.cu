// Reference for task scatter_add: zero the output, then one thread per element does a float
// atomicAdd (the order of the additions is free; the task's tolerance covers it).
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void scatter_add_kernel(const int* idx, const float* src, float* out, int n, int n_out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int j = idx[i];
    if (j >= 0 && j < n_out) atomicAdd(&out[j], src[i]);
  }
}

extern "C" void solution(const int* idx, const float* src, float* out, int n, int n_out) {
  if (n_out <= 0) return;
  cudaMemset(out, 0, n_out * sizeof(float));
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  scatter_add_kernel<<<grid, block>>>(idx, src, out, n, n_out);
  cudaDeviceSynchronize();
}
