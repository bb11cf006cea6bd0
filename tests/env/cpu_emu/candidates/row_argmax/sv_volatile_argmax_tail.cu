// expect: correct
// flags: implicit_warp_sync
// Row argmax with a (value, index) struct: each thread scans a strided slice of the row, a
// __syncthreads tree on a `__shared__ volatile best[]` array goes down to 64 candidates, then the
// first warp finishes with the struct's volatile member function and no __syncwarp (relies on
// implicit warp synchrony). Equal values keep the smaller index, so the first maximum wins.
#include <cuda_runtime.h>

#define BLOCK 128

struct best {
  float v;
  int i;
  __device__ void take(const volatile best& o) volatile {
    if (o.v > v || (o.v == v && o.i < i)) {
      v = o.v;
      i = o.i;
    }
  }
};

__global__ void row_argmax(const float* x, int* out, int cols) {
  __shared__ volatile best sb[BLOCK];
  const unsigned t = threadIdx.x;
  const float* row = x + static_cast<size_t>(blockIdx.x) * cols;
  float v = -3.0e38f;
  int at = cols;
  for (int j = t; j < cols; j += BLOCK)
    if (row[j] > v) {
      v = row[j];
      at = j;
    }
  sb[t].v = v;
  sb[t].i = at;
  __syncthreads();
  for (unsigned half = BLOCK / 2; half > 32; half >>= 1) {
    if (t < half) sb[t].take(sb[t + half]);
    __syncthreads();
  }
  if (t < 32) {
    sb[t].take(sb[t + 32]);
    sb[t].take(sb[t + 16]);
    sb[t].take(sb[t + 8]);
    sb[t].take(sb[t + 4]);
    sb[t].take(sb[t + 2]);
    sb[t].take(sb[t + 1]);
  }
  if (t == 0) out[blockIdx.x] = sb[0].i;
}

extern "C" void solution(const float* x, int* out, int rows, int cols) {
  row_argmax<<<rows, BLOCK>>>(x, out, cols);
  cudaDeviceSynchronize();
}
