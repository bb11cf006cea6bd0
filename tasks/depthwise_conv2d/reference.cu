// Reference for task depthwise_conv2d (valid cross-correlation, one R x R filter per channel):
// one thread per output element, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void depthwise_conv2d_kernel(const float* x, const float* w, float* y, int C, int H,
                                        int W, int R) {
  const int out_h = H - R + 1;
  const int out_w = W - R + 1;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= C * out_h * out_w) return;
  const int c = idx / (out_h * out_w);
  const int i = (idx / out_w) % out_h;
  const int j = idx % out_w;
  double acc = 0.0;
  for (int a = 0; a < R; ++a) {
    for (int b = 0; b < R; ++b) {
      acc += (double)x[(c * H + (i + a)) * W + (j + b)] * w[(c * R + a) * R + b];
    }
  }
  y[idx] = (float)acc;
}

extern "C" void solution(const float* x, const float* w, float* y, int C, int H, int W, int R) {
  if (C <= 0 || R <= 0 || H < R || W < R) return;
  const int total = C * (H - R + 1) * (W - R + 1);
  const int block = 256;
  const int grid = (total + block - 1) / block;
  depthwise_conv2d_kernel<<<grid, block>>>(x, w, y, C, H, W, R);
  cudaDeviceSynchronize();
}
