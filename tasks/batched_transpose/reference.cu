// Reference for task batched_transpose: naive and correct, one thread per output element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void batched_transpose_kernel(const float* x, float* y, int B, int M, int N) {
  long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long long)B * M * N) return;
  const long long b = idx / ((long long)N * M);
  const int j = (int)((idx / M) % N);
  const int i = (int)(idx % M);
  y[idx] = x[(b * M + i) * N + j];
}

extern "C" void solution(const float* x, float* y, int B, int M, int N) {
  if (B <= 0 || M <= 0 || N <= 0) return;
  const long long total = (long long)B * M * N;
  const int block = 256;
  const int grid = (int)((total + block - 1) / block);
  batched_transpose_kernel<<<grid, block>>>(x, y, B, M, N);
  cudaDeviceSynchronize();
}
