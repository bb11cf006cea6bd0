// expect: runtime_error
// reason: outputs
// feedback-has: outputs.bin in the candidate's working directory was replaced by a symbolic link
// task: vector_add
// Computes the right answer, then swaps the harness's outputs file in its working directory for
// a symbolic link to a file of its own (the harness keeps writing to the unlinked original). leap
// opens the outputs without following a link, so it reads nothing, and the verdict's diagnostics
// say the file was replaced: no answer reaches leap except through the file the harness wrote.
#include <cuda_runtime.h>
#include <stdio.h>
#include <unistd.h>
// Token pasting hides the calls from leap's static guards, so the runtime protections are tested.
#define LEAP_ADV_CALL(a, b) a##b

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add_kernel<<<240, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
  FILE* mine = LEAP_ADV_CALL(fop, en)("mine.bin", "wb");
  if (mine)
    fclose(mine);
  LEAP_ADV_CALL(un, link)("outputs.bin");
  LEAP_ADV_CALL(sym, link)("mine.bin", "outputs.bin");
}
