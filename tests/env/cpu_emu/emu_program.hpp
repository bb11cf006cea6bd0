// Test helper for the CPU emulation: rewrites a CUDA program, compiles it with g++ against the
// shim headers and leap_emu_rt, runs it under a timeout and captures its output. Used by the
// GoogleTest cases of test_cpu_emu from the test's main thread.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace leap::emu::testing {

struct program_result {
  bool rewritten = false;
  std::string rewrite_error;
  int compile_rc = -1;
  std::string compile_log;
  int run_rc = -1;        // exit status; 124 when the timeout killed it
  std::string output;     // stdout + stderr of the run
  double run_seconds = 0;
};

// `name` names the work files; `cuda` is a whole program with its own main(). When `raw_cpp`
// is true the source is compiled as is (no rewrite), for testing the runtime directly.
program_result build_and_run(const std::string& name, const std::string& cuda, int timeout_s = 30,
                             bool raw_cpp = false, const std::string& env = "");

// The whole program tests/env/cpu_emu/programs/<file> (a .cu with its own main() that prints PASS
// on success). Such programs are plain CUDA: the same file is built with nvcc and run on a GPU
// (scripts/gpu-check.sh), so what the emulation is tested to do is what a GPU does. Fails the
// calling test (and returns "") when the file cannot be read.
std::string load_program(const std::string& file);

// The program was rewritten, compiled, exited 0 and printed PASS (GoogleTest assertions).
inline void expect_ran_ok(const program_result& r) {
  ASSERT_TRUE(r.rewritten) << r.rewrite_error;
  ASSERT_EQ(r.compile_rc, 0) << r.compile_log;
  EXPECT_EQ(r.run_rc, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

}  // namespace leap::emu::testing
