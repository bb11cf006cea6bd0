// Reference for task avgpool1d (window k, stride s, no padding): naive and correct, one thread
// per output element, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void avgpool1d_kernel(const float* x, float* y, int C, int L, int k, int s) {
  const int out_l = (L - k) / s + 1;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= C * out_l) return;
  const int c = idx / out_l;
  const int j = idx % out_l;
  double sum = 0.0;
  for (int a = 0; a < k; ++a) sum += (double)x[(long long)c * L + j * s + a];
  y[idx] = (float)(sum / k);
}

extern "C" void solution(const float* x, float* y, int C, int L, int k, int s) {
  if (C <= 0 || k <= 0 || s <= 0 || L < k) return;
  const int total = C * ((L - k) / s + 1);
  const int block = 256;
  const int grid = (total + block - 1) / block;
  avgpool1d_kernel<<<grid, block>>>(x, y, C, L, k, s);
  cudaDeviceSynchronize();
}
