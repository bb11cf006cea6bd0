// expect: correct
// task: vector_add
// A fork loop whose children call setsid() and spin forever. Every fork must fail (seccomp),
// so no process outlives the check; the sum is then computed correctly.
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
  int forked = 0;
  for (int k = 0; k < 200; ++k) {
    pid_t p = LEAP_ADV_CALL(fo, rk)();
    if (p == 0) {
      LEAP_ADV_CALL(set, sid)();
      for (;;) {
      }
    }
    if (p > 0) ++forked;
  }
  if (forked > 0) sabotage(a, b, c, n); else correct_add(a, b, c, n);
}
