// expect: wrong_answer
// reason: mismatch
// A single-buffered cp.async GEMM whose wait is off by one: after committing tile t it waits with
// cp.async.wait_group 1, which only completes tile t-1's group, so the product reads shared
// memory before tile t's copies are guaranteed to have landed (a GPU may or may not show them;
// the emulation performs a copy only at the wait that covers it, so the tiles are always stale).
#include <cuda_runtime.h>

constexpr int kT = 16;

__global__ void gemm_stale(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float sa[kT][kT];
  __shared__ __align__(16) float sb[kT][kT];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kT + ty, col = blockIdx.x * kT + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kT) {
    const bool a_in = row < M && k0 + tx < K, b_in = k0 + ty < K && col < N;
    const unsigned da = static_cast<unsigned>(__cvta_generic_to_shared(&sa[ty][tx]));
    const unsigned db = static_cast<unsigned>(__cvta_generic_to_shared(&sb[ty][tx]));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(da),
                 "l"(a_in ? A + row * K + k0 + tx : A), "r"(a_in ? 4 : 0));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(db),
                 "l"(b_in ? B + (k0 + ty) * N + col : B), "r"(b_in ? 4 : 0));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);  // should be 0: this tile is the newest group
    __syncthreads();
    for (int k = 0; k < kT; ++k) acc += sa[ty][k] * sb[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(kT, kT), grid((N + kT - 1) / kT, (M + kT - 1) / kT);
  gemm_stale<<<grid, block>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}
