// Reference for task matmul_bias_gelu: naive and correct, one thread per output element, sums in
// double, then bias and GELU (tanh approximation) in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void matmul_bias_gelu_kernel(const float* A, const float* B, const float* bias,
                                        float* C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  double z = 0.0;
  for (int k = 0; k < K; ++k) z += (double)A[(long long)row * K + k] * B[(long long)k * N + col];
  z += bias[col];
  const double k_sqrt_2_over_pi = 0.7978845608028654;
  const double inner = k_sqrt_2_over_pi * (z + 0.044715 * z * z * z);
  C[(long long)row * N + col] = (float)(0.5 * z * (1.0 + tanh(inner)));
}

extern "C" void solution(const float* A, const float* B, const float* bias, float* C, int M, int N,
                         int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_bias_gelu_kernel<<<grid, block>>>(A, B, bias, C, M, N, K);
  cudaDeviceSynchronize();
}
