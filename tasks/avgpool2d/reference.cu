// Reference for task avgpool2d (C x H x W input, k x k window, stride s, no padding): naive and
// correct, one thread per output element, the window summed in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void avgpool2d_kernel(const float* x, float* y, int C, int H, int W, int k, int s) {
  const int out_h = (H - k) / s + 1;
  const int out_w = (W - k) / s + 1;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= C * out_h * out_w) return;
  const int c = idx / (out_h * out_w);
  const int i = (idx / out_w) % out_h;
  const int j = idx % out_w;
  double acc = 0.0;
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) {
      acc += x[((long long)c * H + (i * s + a)) * W + (j * s + b)];
    }
  }
  y[idx] = (float)(acc / ((double)k * k));
}

extern "C" void solution(const float* x, float* y, int C, int H, int W, int k, int s) {
  if (C <= 0 || k <= 0 || s <= 0 || H < k || W < k) return;
  const int total = C * ((H - k) / s + 1) * ((W - k) / s + 1);
  const int block = 256;
  const int grid = (total + block - 1) / block;
  avgpool2d_kernel<<<grid, block>>>(x, y, C, H, W, k, s);
  cudaDeviceSynchronize();
}
