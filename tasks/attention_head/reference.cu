// Reference for task attention_head: three naive kernels with double temporaries:
// scores (one thread per (i, j)), row softmax (one thread per row), P * v (one thread per output).
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void attention_scores(const float* q, const float* k, double* s, int seq, int d) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= seq || j >= seq) return;
  double acc = 0.0;
  for (int c = 0; c < d; ++c) acc += (double)q[i * d + c] * k[j * d + c];
  s[i * seq + j] = acc / sqrt((double)d);
}

__global__ void attention_softmax(double* s, int seq) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= seq) return;
  double* row = s + (long long)i * seq;
  double m = row[0];
  for (int j = 1; j < seq; ++j) m = row[j] > m ? row[j] : m;
  double sum = 0.0;
  for (int j = 0; j < seq; ++j) {
    row[j] = exp(row[j] - m);
    sum += row[j];
  }
  for (int j = 0; j < seq; ++j) row[j] /= sum;
}

__global__ void attention_output(const double* p, const float* v, float* out, int seq, int d) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= seq || c >= d) return;
  double acc = 0.0;
  for (int j = 0; j < seq; ++j) acc += p[i * seq + j] * v[j * d + c];
  out[i * d + c] = (float)acc;
}

extern "C" void solution(const float* q, const float* k, const float* v, float* out, int seq,
                         int d) {
  if (seq <= 0 || d <= 0) return;
  double* s = nullptr;
  cudaMalloc(&s, (size_t)seq * seq * sizeof(double));
  dim3 block(16, 16);
  dim3 grid_s((seq + block.x - 1) / block.x, (seq + block.y - 1) / block.y);
  attention_scores<<<grid_s, block>>>(q, k, s, seq, d);
  attention_softmax<<<(seq + 127) / 128, 128>>>(s, seq);
  dim3 grid_o((d + block.x - 1) / block.x, (seq + block.y - 1) / block.y);
  attention_output<<<grid_o, block>>>(s, v, out, seq, d);
  cudaDeviceSynchronize();
  cudaFree(s);
}
