// expect: runtime_error
// Correct values for c[0..n), but also writes zeros to c[n..n+64): 256 bytes past the end of the
// output, which stays inside the allocation's slack on a GPU and does not crash, so only the
// harness's canaries after the buffer can catch it. Reads stay in bounds.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n + 64) c[i] = i < n ? a[i] + b[i] : 0.0f;
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  const int total = n + 64;
  add_kernel<<<(total + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
