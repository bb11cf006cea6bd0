// expect: correct
// vector_add with a fixed-size grid and a grid-stride loop: each thread handles several elements.
#include <cuda_runtime.h>

__global__ void add_grid_stride(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    c[i] = a[i] + b[i];
  }
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (n <= 0) return;
  const int block = 128;
  int grid = (n + block - 1) / block;
  if (grid > 240) grid = 240;
  add_grid_stride<<<grid, block>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
