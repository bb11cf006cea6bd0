// Reference for task conv2d_strided (valid cross-correlation with stride s, C in, F out channels,
// R x R filter): one thread per output element, sums in double.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void conv2d_strided_kernel(const float* x, const float* w, float* y, int C, int H,
                                      int W, int F, int R, int s) {
  const int out_h = (H - R) / s + 1;
  const int out_w = (W - R) / s + 1;
  const int total = F * out_h * out_w;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int f = idx / (out_h * out_w);
  const int i = (idx / out_w) % out_h;
  const int j = idx % out_w;
  double acc = 0.0;
  for (int c = 0; c < C; ++c) {
    for (int a = 0; a < R; ++a) {
      for (int b = 0; b < R; ++b) {
        acc += (double)x[((long long)c * H + (i * s + a)) * W + (j * s + b)] *
               w[((f * C + c) * R + a) * R + b];
      }
    }
  }
  y[idx] = (float)acc;
}

extern "C" void solution(const float* x, const float* w, float* y, int C, int H, int W, int F,
                         int R, int s) {
  if (F <= 0 || s <= 0 || H < R || W < R) return;
  const int total = F * ((H - R) / s + 1) * ((W - R) / s + 1);
  const int block = 256;
  const int grid = (total + block - 1) / block;
  conv2d_strided_kernel<<<grid, block>>>(x, w, y, C, H, W, F, R, s);
  cudaDeviceSynchronize();
}
