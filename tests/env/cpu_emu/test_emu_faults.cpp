// End-to-end tests of how the CPU emulation words faults: a misaligned 16-byte vector access
// reads "misaligned address" as on a GPU, not "invalid memory access".
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"

namespace {

using leap::emu::testing::build_and_run;

TEST(CpuEmuFaults, MisalignedFloat4LoadSaysMisalignedAddress) {
  // Reads float4s starting one float into the buffer: every address is 4 mod 16.
  const char* src = R"cu(
__global__ void shifted_copy(const float* in, float* out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = reinterpret_cast<const float4*>(in + 1)[i];
    reinterpret_cast<float4*>(out)[i] = v;
  }
}
int main() {
  float *in, *out;
  cudaMalloc(&in, 1028 * sizeof(float)); cudaMalloc(&out, 1024 * sizeof(float));
  shifted_copy<<<2, 128>>>(in, out, 256);
  cudaDeviceSynchronize();
  printf("not reached\n");
}
)cu";
  auto r = build_and_run("misaligned", src, 20);
  ASSERT_EQ(r.compile_rc, 0) << r.compile_log;
  EXPECT_NE(r.run_rc, 0) << r.output;
  EXPECT_NE(r.output.find("emulation: misaligned address in kernel shifted_copy, block (0,0,0), thread (0,0,0)"),
            std::string::npos) << r.output;
}

TEST(CpuEmuFaults, AlignedFloat4LoadsDoNotFault) {
  const char* src = R"cu(
__global__ void copy4(const float* in, float* out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in + 4)[i];
}
int main() {
  float *in, *out;
  cudaMalloc(&in, 1028 * sizeof(float)); cudaMalloc(&out, 1024 * sizeof(float));
  for (int i = 0; i < 1028; ++i) in[i] = i;
  copy4<<<2, 128>>>(in, out, 256);
  cudaDeviceSynchronize();
  printf(out[5] == 9.0f ? "PASS\n" : "FAIL\n");
}
)cu";
  auto r = build_and_run("aligned4", src, 20);
  ASSERT_EQ(r.compile_rc, 0) << r.compile_log;
  EXPECT_EQ(r.run_rc, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

}  // namespace
