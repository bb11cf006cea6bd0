// expect: runtime_error
// task: vector_add
// Writes a gigabyte to stdout and to stderr, then computes correctly: past 16 MB leap closes the
// stream, the write fails with SIGPIPE, and the verdict is runtime_error (output limit); leap keeps
// only a capped amount of the output and stays responsive.
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
  static char buf[1 << 20];
  memset(buf, 'x', sizeof buf);
  for (int k = 0; k < 1024; ++k) {
    fwrite(buf, 1, sizeof buf, stdout);
    fwrite(buf, 1, sizeof buf, stderr);
  }
  correct_add(a, b, c, n);
}
