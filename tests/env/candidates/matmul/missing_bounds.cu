// expect: runtime_error|wrong_answer
// The tiled matmul without any bounds checks: correct when M, N and K are multiples of 16, but for
// other sizes it reads past A and B and writes past the end of C (rows >= M land after the buffer,
// columns >= N wrap into the next row). Depending on where the stray stores land this is a crash or
// a canary hit (runtime_error) or corrupted values (wrong_answer).
#include <cuda_runtime.h>

constexpr int k_tile = 16;

__global__ void matmul_tiled_unchecked(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  __shared__ float a_tile[k_tile][k_tile];
  __shared__ float b_tile[k_tile][k_tile];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * k_tile + ty;
  const int col = blockIdx.x * k_tile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += k_tile) {
    a_tile[ty][tx] = A[row * K + k0 + tx];
    b_tile[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < k_tile; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K) {
  dim3 block(k_tile, k_tile);
  dim3 grid((N + k_tile - 1) / k_tile, (M + k_tile - 1) / k_tile);
  matmul_tiled_unchecked<<<grid, block>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}
