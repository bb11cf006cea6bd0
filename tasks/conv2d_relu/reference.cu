// Reference for task conv2d_relu (valid cross-correlation, C in, F out channels, R x R filter,
// plus bias[f], then ReLU): one thread per output element, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void conv2d_relu_kernel(const float* x, const float* w, const float* bias, float* y,
                                   int C, int H, int W, int F, int R) {
  const int out_h = H - R + 1;
  const int out_w = W - R + 1;
  const int total = F * out_h * out_w;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int f = idx / (out_h * out_w);
  const int i = (idx / out_w) % out_h;
  const int j = idx % out_w;
  double acc = bias[f];
  for (int c = 0; c < C; ++c) {
    for (int a = 0; a < R; ++a) {
      for (int b = 0; b < R; ++b) {
        acc += (double)x[(c * H + (i + a)) * W + (j + b)] * w[((f * C + c) * R + a) * R + b];
      }
    }
  }
  y[idx] = (float)(acc > 0.0 ? acc : 0.0);
}

extern "C" void solution(const float* x, const float* w, const float* bias, float* y, int C,
                         int H, int W, int F, int R) {
  const int total = F * (H - R + 1) * (W - R + 1);
  if (F <= 0 || H < R || W < R) return;
  const int block = 256;
  const int grid = (total + block - 1) / block;
  conv2d_relu_kernel<<<grid, block>>>(x, w, bias, y, C, H, W, F, R);
  cudaDeviceSynchronize();
}
