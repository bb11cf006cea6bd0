// expect: runtime_error
// reason: background_work
// task: vector_add
// Correct on its first call; from then on it hands the work to a detached host thread and returns
// at once (on a GPU, work that outlives the timed call). The harness counts the process's threads
// around every call after the first. Token pasting hides the calls from the static guards, so the
// runtime check is what is tested. (The emulation's device memory is host memory, so the thread
// may write the outputs directly.)
#include <cuda_runtime.h>
#include <time.h>
#define LEAP_ADV_CALL(a, b) a##b

extern "C" int LEAP_ADV_CALL(pthread_, create)(unsigned long*, const void*, void* (*)(void*), void*);
extern "C" int LEAP_ADV_CALL(pthread_, detach)(unsigned long);

struct work {
  const float *a, *b;
  float* c;
  int n;
};
static work job;

static void* later(void*) {
  const clock_t until = clock() + CLOCKS_PER_SEC / 2;
  while (clock() < until) {
  }
  for (int i = 0; i < job.n; ++i)
    job.c[i] = job.a[i] + job.b[i];
  return nullptr;
}

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

static int calls = 0;
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (calls++ == 0) {
    add_kernel<<<240, 256>>>(a, b, c, n);
    cudaDeviceSynchronize();
    return;
  }
  job = {a, b, c, n};
  unsigned long t = 0;
  if (LEAP_ADV_CALL(pthread_, create)(&t, nullptr, later, nullptr) == 0)
    LEAP_ADV_CALL(pthread_, detach)(t);
}
