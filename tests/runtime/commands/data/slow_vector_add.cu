#include <cuda_runtime.h>

// Correct, but every element takes a long dependent loop first (a few seconds in all on the
// CPU emulation), so a test can kill its worker while it runs.
__global__ void slow_add(const float* a, const float* b, float* c, int n, int spin) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  for (int k = 0; k < spin; ++k)
    x = x * 0.5f + a[i] * 0.5f;
  c[i] = x + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (n <= 0) return;
  slow_add<<<(n + 255) / 256, 256>>>(a, b, c, n, 1000);
  cudaDeviceSynchronize();
}
