// expect: runtime_error
// Launches the kernel with a null output pointer (hidden behind a volatile so the compiler cannot
// see it): every thread stores through null. A GPU reports an illegal address; the CPU emulation
// gets SIGSEGV.
#include <cuda_runtime.h>

static float* volatile g_output_override = nullptr;

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  float* out = g_output_override;  // null: the real output c is never used
  add_kernel<<<(n + 255) / 256, 256>>>(a, b, out, n);
  cudaDeviceSynchronize();
}
