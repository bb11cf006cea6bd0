// Reference for task matmul_small_k (C = A * B with K small): naive and correct, one thread per
// output element, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void matmul_small_k_kernel(const float* A, const float* B, float* C, int M, int N,
                                      int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) acc += (double)A[(long long)row * K + k] * B[(long long)k * N + col];
  C[(long long)row * N + col] = (float)acc;
}

extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_small_k_kernel<<<grid, block>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}
