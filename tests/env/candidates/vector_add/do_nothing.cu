// expect: wrong_answer
// Returns without writing c: the harness poisons outputs with NaN, so every element mismatches.
#include <cuda_runtime.h>

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  (void)a;
  (void)b;
  (void)c;
  (void)n;
}
