// leap-taskgen-op: fam=ew;inputs=3;body=add(mul(a,b),c);map=v;reduce=;axis=row;source=;variant=;scale=1;bias=0;exclusive=0;reverse=0;window=0;stride=0
// Reference of the test fixture hf_fma_half: inputs converted to half2 pairs, one __hfma2 per
// pair (a*b + c rounded once to half), widened back to float. n is even.
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void fma_half2(const float2* a, const float2* b, const float2* c, float2* out, int pairs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= pairs) return;
  const half2 r = __hfma2(__float22half2_rn(a[i]), __float22half2_rn(b[i]), __float22half2_rn(c[i]));
  out[i] = __half22float2(r);
}

extern "C" void solution(const float* a, const float* b, const float* c, float* out, int n) {
  const int pairs = n / 2;
  fma_half2<<<(pairs + 255) / 256, 256>>>(reinterpret_cast<const float2*>(a), reinterpret_cast<const float2*>(b),
                                          reinterpret_cast<const float2*>(c), reinterpret_cast<float2*>(out), pairs);
  cudaDeviceSynchronize();
}
