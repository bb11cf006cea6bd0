// expect: compile_error
// Uses an undeclared identifier (`idx` instead of `i`): nvcc and the emulation's g++ both reject it.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[idx] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
