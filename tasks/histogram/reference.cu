// Reference for task histogram: zero the bins, then one thread per element does an atomicAdd.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void histogram_kernel(const int* x, int* hist, int n, int bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int b = x[i];
    if (b >= 0 && b < bins) atomicAdd(&hist[b], 1);
  }
}

extern "C" void solution(const int* x, int* hist, int n, int bins) {
  if (bins <= 0) return;
  cudaMemset(hist, 0, bins * sizeof(int));
  if (n <= 0) return;
  const int block = 256;
  const int grid = (n + block - 1) / block;
  histogram_kernel<<<grid, block>>>(x, hist, n, bins);
  cudaDeviceSynchronize();
}
