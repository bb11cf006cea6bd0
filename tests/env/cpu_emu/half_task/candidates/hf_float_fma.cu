// expect: correct
// Computes a*b + c in float32 (fmaf): closer to the exact result than the half reference, and
// within the task's tolerance of it.
#include <cuda_runtime.h>

__global__ void k(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(a[i], b[i], c[i]);
}

extern "C" void solution(const float* a, const float* b, const float* c, float* out, int n) {
  k<<<(n + 255) / 256, 256>>>(a, b, c, out, n);
  cudaDeviceSynchronize();
}
