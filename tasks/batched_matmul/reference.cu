// Reference for task batched_matmul: naive and correct, one thread per output element (the batch
// along the grid's z dimension), sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void batched_matmul_kernel(const float* A, const float* B, float* C, int batch, int M,
                                      int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int b = blockIdx.z;
  if (b >= batch || row >= M || col >= N) return;
  const float* a = A + (long long)b * M * K;
  const float* bm = B + (long long)b * K * N;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) acc += (double)a[(long long)row * K + k] * bm[(long long)k * N + col];
  C[((long long)b * M + row) * N + col] = (float)acc;
}

extern "C" void solution(const float* A, const float* B, float* C, int batch, int M, int N,
                         int K) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y, batch);
  batched_matmul_kernel<<<grid, block>>>(A, B, C, batch, M, N, K);
  cudaDeviceSynchronize();
}
