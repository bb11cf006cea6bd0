// expect: runtime_error
// task: vector_add
// Allocates device memory until cudaMalloc fails, then launches on the null pointer.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
// Token pasting hides the call from leap's static guards, so the runtime protections are tested.
#define LEAP_ADV_CALL(a, b) a##b

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

static void correct_add(const float* a, const float* b, float* c, int n) {
  add_kernel<<<240, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}

// Makes the verdict wrong: used when an attack that must be blocked succeeded.
static void sabotage(const float* a, const float* b, float* c, int n) {
  add_kernel<<<240, 256>>>(a, a, c, n);
  cudaDeviceSynchronize();
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  float* p = nullptr;
  for (int k = 0; k < 100000; ++k) {
    if (cudaMalloc(&p, 256 << 20) != cudaSuccess) { p = nullptr; break; }
    cudaMemset(p, 0, 256 << 20);
  }
  add_kernel<<<240, 256>>>(a, b, p, n);
  cudaDeviceSynchronize();
  if (cudaGetLastError() != cudaSuccess) { volatile int* z = nullptr; *z = 1; }
}
