// expect: wrong_answer
// reason: mismatch|timed_mismatch
// task: vector_add
// Computes, then returns at once whenever it is called again on the pointers of its previous
// call (a timing-loop replay: on a GPU it would time as nearly free). Every call, the timed ones
// included, gets fresh inputs, so the outputs it leaves are stale or still poisoned.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

static const float* last_a = nullptr;
static float* last_c = nullptr;
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (a == last_a && c == last_c)
    return;
  add_kernel<<<240, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
  last_a = a;
  last_c = c;
}
