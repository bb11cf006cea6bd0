// expect: timeout|runtime_error
// task: vector_add
// Thread 0 waits at __syncthreads while the others spin on a shared flag only thread 0
// sets after the barrier: a deadlock that never reaches the barrier (ends by the timeout).
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
__global__ void stuck(float* c) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) flag = 0;
  if (threadIdx.x == 0) {
    __syncthreads();
    flag = 1;
  } else {
    while (!flag) {
    }
  }
  c[threadIdx.x] = 1.0f;
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  stuck<<<1, 64>>>(c);
  cudaDeviceSynchronize();
}
