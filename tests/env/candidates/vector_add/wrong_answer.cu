// expect: wrong_answer
// Subtracts instead of adding: compiles and runs cleanly, every output is wrong.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] - b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (n <= 0) return;
  add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
