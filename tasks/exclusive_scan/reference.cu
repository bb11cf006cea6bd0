// Reference for task exclusive_scan: deliberately naive and exact-ish: one thread walks the array
// with a double accumulator (slow on a GPU, but obviously correct).
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void exclusive_scan_kernel(const float* x, float* y, int n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double acc = 0.0;
  for (int i = 0; i < n; ++i) {
    y[i] = (float)acc;
    acc += x[i];
  }
}

extern "C" void solution(const float* x, float* y, int n) {
  if (n <= 0) return;
  exclusive_scan_kernel<<<1, 1>>>(x, y, n);
  cudaDeviceSynchronize();
}
