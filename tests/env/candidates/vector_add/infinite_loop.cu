// expect: timeout
// Every thread spins forever on a volatile read of its input (a[0] == a[0] holds for the finite
// inputs the harness generates); the volatile load keeps the compiler from deleting the loop.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const volatile float* va = a;
  while (va[0] == va[0]) {
  }
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
