// expect: correct
// task: vector_add
// must-not-exist: /tmp/leap_adv_static_ctor
// A static constructor (runs before main, before the harness) tries to create a file: the
// sandbox is in place before any candidate code runs.
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
__attribute__((constructor)) static void leap_adv_before_main() {
  FILE* f = LEAP_ADV_CALL(fop, en)("/tmp/leap_adv_static_ctor", "w");
  if (f) { fputs("pwned\n", f); fclose(f); }
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  correct_add(a, b, c, n);
}
