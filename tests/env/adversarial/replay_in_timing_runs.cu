// expect: wrong_answer
// reason: timed_mismatch
// task: vector_add
// Correct in the checked trials (the suite's config makes 5 calls: 2 size sets x 2 trials and a
// repeat), then replays from its sixth call on whenever the pointers are those of its last call:
// only the check of the timed calls' outputs can catch it.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

static int calls = 0;
static float* last_c = nullptr;
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (++calls > 5 && c == last_c)
    return;
  add_kernel<<<240, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
  last_c = c;
}
