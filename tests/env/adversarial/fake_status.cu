// expect: runtime_error
// task: vector_add
// Forges the harness's status file ('done') and leaves with _exit(0) without computing:
// leap trusts only complete outputs it compares itself.
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
  FILE* f = LEAP_ADV_CALL(fop, en)("status.txt", "a");
  if (f) { fputs("ok 0 0\nok 0 1\nok 1 0\nok 1 1\ndone\n", f); fclose(f); }
  LEAP_ADV_CALL(_ex, it)(0);
}
