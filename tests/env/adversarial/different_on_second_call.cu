// expect: wrong_answer
// task: vector_add
// Correct on every call but the second: only the repeated identical call in the first trial
// catches it (verdict reason 'inconsistent').
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
__global__ void add_bias(float* c, int n, float bias) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] += bias;
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  static int calls = 0;
  ++calls;
  correct_add(a, b, c, n);
  if (calls == 2) {
    add_bias<<<(n + 255) / 256, 256>>>(c, n, 0.5f);
    cudaDeviceSynchronize();
  }
}
