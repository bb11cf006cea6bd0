// The reference-verification workflow (`leap tasks verify`): every reference must build (nvcc,
// and the emulation on the CPU backend), run, and agree with an independent LibTorch computation
// of the same operation on the same inputs (env/oracles), with a tolerance that no degenerate
// answer meets. Called from the CLI's main thread (or a test's); blocking.
#pragma once

#include "runtime/pipeline/evaluator.hpp"

#include <string>
#include <vector>

namespace leap::runtime {

struct verify_row {
  std::string task;
  int level = 0;
  bool ok = false;
  std::string problem;        // why not ok
  double compile_seconds = 0; // reference build (0 when cached)
  bool cached = false;
  double run_seconds = 0;     // reference run (twice: as candidate and as reference)
  double max_abs_vs_oracle = 0;
  double max_rel_vs_oracle = 0;
  bool timed = false;
  double reference_ms = 0;
};

std::vector<verify_row> verify_tasks(services& svc, evaluator& ev,
                                     const std::vector<std::string>& only);

} // namespace leap::runtime
