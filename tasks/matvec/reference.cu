// Reference for task matvec: naive and correct, one thread per output row, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void matvec_kernel(const float* A, const float* x, float* y, int M, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M) return;
  const float* row = A + (long long)i * N;
  double acc = 0.0;
  for (int j = 0; j < N; ++j) acc += (double)row[j] * x[j];
  y[i] = (float)acc;
}

extern "C" void solution(const float* A, const float* x, float* y, int M, int N) {
  if (M <= 0) return;
  const int block = 128;
  const int grid = (M + block - 1) / block;
  matvec_kernel<<<grid, block>>>(A, x, y, M, N);
  cudaDeviceSynchronize();
}
