// Reference for task causal_attention: three naive kernels with double temporaries:
// scores for j <= i (one thread per (i, j)), masked row softmax (one thread per row), P * v over
// j <= i (one thread per output).
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void causal_scores(const float* q, const float* k, double* s, int seq, int d) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= seq || j >= seq) return;
  if (j > i) {
    s[i * seq + j] = 0.0;  // masked: never read
    return;
  }
  double acc = 0.0;
  for (int c = 0; c < d; ++c) acc += (double)q[i * d + c] * k[j * d + c];
  s[i * seq + j] = acc / sqrt((double)d);
}

__global__ void causal_softmax(double* s, int seq) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= seq) return;
  double* row = s + (long long)i * seq;
  double m = row[0];
  for (int j = 1; j <= i; ++j) m = row[j] > m ? row[j] : m;
  double sum = 0.0;
  for (int j = 0; j <= i; ++j) {
    row[j] = exp(row[j] - m);
    sum += row[j];
  }
  for (int j = 0; j <= i; ++j) row[j] /= sum;
}

__global__ void causal_output(const double* p, const float* v, float* out, int seq, int d) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= seq || c >= d) return;
  double acc = 0.0;
  for (int j = 0; j <= i; ++j) acc += p[i * seq + j] * v[j * d + c];
  out[i * d + c] = (float)acc;
}

extern "C" void solution(const float* q, const float* k, const float* v, float* out, int seq,
                         int d) {
  if (seq <= 0 || d <= 0) return;
  double* s = nullptr;
  cudaMalloc(&s, (size_t)seq * seq * sizeof(double));
  dim3 block(16, 16);
  dim3 grid_s((seq + block.x - 1) / block.x, (seq + block.y - 1) / block.y);
  causal_scores<<<grid_s, block>>>(q, k, s, seq, d);
  causal_softmax<<<(seq + 127) / 128, 128>>>(s, seq);
  dim3 grid_o((d + block.x - 1) / block.x, (seq + block.y - 1) / block.y);
  causal_output<<<grid_o, block>>>(s, v, out, seq, d);
  cudaDeviceSynchronize();
  cudaFree(s);
}
