// Reference for task row_argmax: naive and correct, one thread per row, first maximum wins.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void row_argmax_kernel(const float* x, int* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (long long)r * cols;
  float m = xr[0];
  int best = 0;
  for (int j = 1; j < cols; ++j) {
    if (xr[j] > m) {
      m = xr[j];
      best = j;
    }
  }
  out[r] = best;
}

extern "C" void solution(const float* x, int* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (rows + block - 1) / block;
  row_argmax_kernel<<<grid, block>>>(x, out, rows, cols);
  cudaDeviceSynchronize();
}
