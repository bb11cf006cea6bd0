// Reference for task maxpool1d (C x L input, window k, stride s, no padding): naive and correct,
// one thread per output element, a sequential max over its window.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void maxpool1d_kernel(const float* x, float* y, int C, int L, int k, int s) {
  const int out_l = (L - k) / s + 1;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= C * out_l) return;
  const int c = idx / out_l;
  const int o = idx % out_l;
  const float* xc = x + (long long)c * L + (long long)o * s;
  float m = xc[0];
  for (int t = 1; t < k; ++t) m = xc[t] > m ? xc[t] : m;
  y[idx] = m;
}

extern "C" void solution(const float* x, float* y, int C, int L, int k, int s) {
  if (C <= 0 || k <= 0 || s <= 0 || L < k) return;
  const int total = C * ((L - k) / s + 1);
  const int block = 256;
  const int grid = (total + block - 1) / block;
  maxpool1d_kernel<<<grid, block>>>(x, y, C, L, k, s);
  cudaDeviceSynchronize();
}
