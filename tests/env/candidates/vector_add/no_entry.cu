// expect: rejected
// A correct kernel and launcher, but the entry point is named `launch` instead of `solution`.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void launch(const float* a, const float* b, float* c, int n) {
  add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
