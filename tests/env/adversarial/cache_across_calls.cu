// expect: wrong_answer
// task: vector_add
// Computes once and replays the first call's result from a static buffer on later calls:
// every trial has fresh inputs, so the replay is wrong.
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
static float* cached = nullptr;
static int cached_n = -1;
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (cached && cached_n == n) {
    cudaMemcpy(c, cached, sizeof(float) * n, cudaMemcpyDeviceToDevice);
    return;
  }
  correct_add(a, b, c, n);
  cudaMalloc(&cached, sizeof(float) * n);
  cudaMemcpy(cached, c, sizeof(float) * n, cudaMemcpyDeviceToDevice);
  cached_n = n;
}
