// expect: runtime_error
// task: vector_add
// Uses an input buffer as scratch space: inputs are read-only.
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
__global__ void scribble(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 0.0f;
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  correct_add(a, b, c, n);
  scribble<<<(n + 255) / 256, 256>>>(const_cast<float*>(a), n);
  cudaDeviceSynchronize();
}
