// Reference for task attention_scores (S = q * k^T / sqrt(d)): naive and correct, one thread per
// score, the dot product in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void attention_scores_kernel(const float* q, const float* k, float* S, int seq, int d) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= seq || j >= seq) return;
  double acc = 0.0;
  for (int c = 0; c < d; ++c) acc += (double)q[(long long)i * d + c] * k[(long long)j * d + c];
  S[(long long)i * seq + j] = (float)(acc / sqrt((double)d));
}

extern "C" void solution(const float* q, const float* k, float* S, int seq, int d) {
  if (seq <= 0 || d <= 0) return;
  dim3 block(16, 16);
  dim3 grid((seq + block.x - 1) / block.x, (seq + block.y - 1) / block.y);
  attention_scores_kernel<<<grid, block>>>(q, k, S, seq, d);
  cudaDeviceSynchronize();
}
