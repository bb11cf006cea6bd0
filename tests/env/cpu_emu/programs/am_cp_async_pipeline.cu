// Double-buffered tile copies with cp.async as PTX defines it: 16-byte copies with a src-size
// operand (zero fill past the end of the input), .ca and .cg, commit_group / wait_group 1 /
// wait_all, and the same pipeline written with __pipeline_memcpy_async / __pipeline_commit /
// __pipeline_wait_prior (4- and 8-byte copies, zfill). Every read of a staged tile comes after
// the wait that covers it and a __syncthreads, so a GPU gives the values checked here.
#include <cstdio>
#include <cuda_pipeline.h>

constexpr int kThreads = 64;
constexpr int kTile = kThreads * 4;  // floats per tile: one float4 per thread

__device__ void stage(float* buf, const float* in, int tile, int n, bool cache_global) {
  const int first = tile * kTile + threadIdx.x * 4;
  const int left = n - first;
  const int bytes = left >= 4 ? 16 : left > 0 ? left * 4 : 0;
  const float* src = bytes > 0 ? in + first : in;
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(buf + threadIdx.x * 4));
  if (cache_global)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

// out[i] = the element of the same tile mirrored (tile[kTile-1-j]) plus 1: every thread reads
// data another thread copied. Elements past n read as 0 (zero fill), so out[i] may be 1.
__global__ void mirror_ptx(const float* in, float* out, int n) {
  __shared__ __align__(16) float buf[2][kTile];
  const int tiles = (n + kTile - 1) / kTile;
  stage(buf[0], in, 0, n, false);
  asm volatile("cp.async.commit_group;\n" ::);
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) stage(buf[(t + 1) & 1], in, t + 1, n, (t & 1) != 0);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    __syncthreads();
    for (int j = threadIdx.x; j < kTile; j += kThreads) {
      const int i = t * kTile + j;
      if (i < n) out[i] = buf[t & 1][kTile - 1 - j] + 1.0f;
    }
    __syncthreads();
  }
  asm volatile("cp.async.wait_all;\n" ::);
}

// The same with the pipeline primitives: 8-byte copies (two per thread per tile, the second
// with zfill 4 past n) and 4-byte ones for a scalar side value.
__global__ void mirror_pipeline(const float* in, const float* scale, float* out, int n) {
  __shared__ __align__(16) float buf[2][kTile];
  __shared__ float s[kThreads];
  const int tiles = (n + kTile - 1) / kTile;
  auto fetch = [&](int tile) {
    float* b = buf[tile & 1];
    for (int h = 0; h < 2; ++h) {
      const int j = threadIdx.x * 4 + h * 2, i = tile * kTile + j;
      const int left = n - i;
      const float* src = left > 0 ? in + i : in;
      __pipeline_memcpy_async(b + j, src, 8, left >= 2 ? 0 : left == 1 ? 4 : 8);
    }
  };
  __pipeline_memcpy_async(&s[threadIdx.x], &scale[threadIdx.x], 4);
  fetch(0);
  __pipeline_commit();
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) fetch(t + 1);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    for (int j = threadIdx.x; j < kTile; j += kThreads) {
      const int i = t * kTile + j;
      if (i < n) out[i] = buf[t & 1][kTile - 1 - j] * s[j % kThreads];
    }
    __syncthreads();
  }
}

int main() {
  const int n = 3 * kTile + 37;  // a partial last tile, with a partial float4 in it
  float *in, *scale, *out1, *out2;
  cudaMallocManaged(&in, n * sizeof(float));
  cudaMallocManaged(&scale, kThreads * sizeof(float));
  cudaMallocManaged(&out1, n * sizeof(float));
  cudaMallocManaged(&out2, n * sizeof(float));
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>((i * 37) % 101) + 0.5f;
  for (int i = 0; i < kThreads; ++i) scale[i] = static_cast<float>(i % 5 + 1);
  mirror_ptx<<<1, kThreads>>>(in, out1, n);
  mirror_pipeline<<<1, kThreads>>>(in, scale, out2, n);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL: launch error %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const int t = i / kTile, j = i % kTile, m = t * kTile + (kTile - 1 - j);
    const float v = m < n ? static_cast<float>((m * 37) % 101) + 0.5f : 0.0f;
    const float want1 = v + 1.0f, want2 = v * static_cast<float>((j % kThreads) % 5 + 1);
    if (out1[i] != want1 || out2[i] != want2) {
      if (++bad <= 5) printf("FAIL at %d: %g %g, want %g %g\n", i, out1[i], out2[i], want1, want2);
    }
  }
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
