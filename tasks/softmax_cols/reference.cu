// Reference for task softmax_cols: naive and correct, one thread per column, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void softmax_cols_kernel(const float* x, float* y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float m = x[c];
  for (int i = 1; i < rows; ++i) m = fmaxf(m, x[(long long)i * cols + c]);
  double sum = 0.0;
  for (int i = 0; i < rows; ++i) sum += (double)expf(x[(long long)i * cols + c] - m);
  for (int i = 0; i < rows; ++i) {
    const long long k = (long long)i * cols + c;
    y[k] = (float)((double)expf(x[k] - m) / sum);
  }
}

extern "C" void solution(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int block = 128;
  const int grid = (cols + block - 1) / block;
  softmax_cols_kernel<<<grid, block>>>(x, y, rows, cols);
  cudaDeviceSynchronize();
}
