// expect: correct
// 16x16 shared-memory tiled matmul: each block computes a 16x16 tile of C, stepping through K in
// 16-wide slabs; loads past the matrix edges are zero-filled and stores are guarded, so any M, N, K
// work.
#include <cuda_runtime.h>

constexpr int k_tile = 16;

__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float a_tile[k_tile][k_tile];
  __shared__ float b_tile[k_tile][k_tile];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * k_tile + ty;
  const int col = blockIdx.x * k_tile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += k_tile) {
    const int a_col = k0 + tx;
    const int b_row = k0 + ty;
    a_tile[ty][tx] = (row < M && a_col < K) ? A[(long long)row * K + a_col] : 0.0f;
    b_tile[ty][tx] = (b_row < K && col < N) ? B[(long long)b_row * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < k_tile; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(long long)row * N + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(k_tile, k_tile);
  dim3 grid((N + k_tile - 1) / k_tile, (M + k_tile - 1) / k_tile);
  matmul_tiled<<<grid, block>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}
