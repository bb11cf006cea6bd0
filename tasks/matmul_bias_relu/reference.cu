// Reference for task matmul_bias_relu: naive and correct, one thread per output element, sums in
// double, then bias and ReLU. Used by leap as ground truth for candidates; compiled by nvcc and by
// the CPU emulation.
#include <cuda_runtime.h>

__global__ void matmul_bias_relu_kernel(const float* A, const float* B, const float* bias,
                                        float* C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) acc += (double)A[(long long)row * K + k] * B[(long long)k * N + col];
  acc += bias[col];
  C[(long long)row * N + col] = acc > 0.0 ? (float)acc : 0.0f;
}

extern "C" void solution(const float* A, const float* B, const float* bias, float* C, int M, int N,
                         int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_bias_relu_kernel<<<grid, block>>>(A, B, bias, C, M, N, K);
  cudaDeviceSynchronize();
}
