// expect: runtime_error
// reason: canary
// task: vector_add
// Correct in [0, n), then an off-by-some loop that copies what lies past the end of `a` to past
// the end of `c`: the bytes it reads there are a's canary. Each buffer has its own canary byte,
// so the copy changes c's canary and the out-of-bounds write is seen (with one byte for every
// buffer it was written back unchanged and passed as correct).
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
  else if (i < n + 8)
    c[i] = a[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add_kernel<<<(n + 8 + 255) / 256, 256>>>(a, b, c, n);
}
