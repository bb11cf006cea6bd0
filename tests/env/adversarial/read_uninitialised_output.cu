// expect: wrong_answer
// task: vector_add
// Accumulates into the output without initialising it (c[i] += ...): outputs are poisoned
// with NaN before every run, so this never passes by luck.
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
__global__ void accumulate(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] += a[i] + b[i];
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  accumulate<<<240, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
