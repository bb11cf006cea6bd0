// expect: correct
// A double-buffered GEMM staged with the pipeline primitives (__pipeline_memcpy_async of 4
// bytes, zfill past the matrix edges, __pipeline_commit, __pipeline_wait_prior(1)): the next
// tile's copies are in flight while the current one is multiplied, and every read of a tile
// comes after the wait that covers it and a barrier.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

constexpr int kT = 16;

__device__ void load_tiles(const float* A, const float* B, float (*sa)[kT], float (*sb)[kT], int k0, int M, int N,
                           int K) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kT + ty, col = blockIdx.x * kT + tx;
  const bool a_in = row < M && k0 + tx < K, b_in = k0 + ty < K && col < N;
  __pipeline_memcpy_async(&sa[ty][tx], a_in ? A + row * K + k0 + tx : A, 4, a_in ? 0 : 4);
  __pipeline_memcpy_async(&sb[ty][tx], b_in ? B + (k0 + ty) * N + col : B, 4, b_in ? 0 : 4);
}

__global__ void gemm_pipelined(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float sa[2][kT][kT];
  __shared__ __align__(16) float sb[2][kT][kT];
  const int steps = (K + kT - 1) / kT;
  load_tiles(A, B, sa[0], sb[0], 0, M, N, K);
  __pipeline_commit();
  float acc = 0.0f;
  for (int s = 0; s < steps; ++s) {
    if (s + 1 < steps) load_tiles(A, B, sa[(s + 1) % 2], sb[(s + 1) % 2], (s + 1) * kT, M, N, K);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    for (int k = 0; k < kT; ++k) acc += sa[s % 2][threadIdx.y][k] * sb[s % 2][k][threadIdx.x];
    __syncthreads();
  }
  const int row = blockIdx.y * kT + threadIdx.y, col = blockIdx.x * kT + threadIdx.x;
  if (row < M && col < N) C[row * N + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(kT, kT), grid((N + kT - 1) / kT, (M + kT - 1) / kT);
  gemm_pipelined<<<grid, block>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}
