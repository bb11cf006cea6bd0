// Comparison of a candidate's raw outputs with the reference's, inside leap's own process (the
// candidate never sees reference outputs and cannot fake the comparison). Pure, thread-safe.
#pragma once

#include "env/task.hpp"

#include <string>
#include <optional>
#include <string_view>

namespace leap::env {

struct comparison {
  bool ok = false;
  std::optional<std::string> malformed; // the output files are malformed or short: why
  double max_abs = 0, max_rel = 0;
  long long first_index = -1; // in the first failing output
  std::string output;         // its name
  int size_set = -1, trial = -1;
  double expected = 0, actual = 0;
  long long mismatches = 0;   // beyond tolerance, in that output of that trial
  int trials_compared = 0, trials_passed = 0;
};

// Both buffers hold, for each size set, each trial, each output argument in signature order,
// its elements as 32-bit values (float or int). Floats pass when |a - e| <= atol + rtol * |e|
// (NaN never passes); ints must be equal.
comparison compare_outputs(const task_spec& task, int trials, std::string_view candidate,
                           std::string_view reference);

// Expected byte size of such a buffer.
std::size_t outputs_bytes(const task_spec& task, int trials);

// The degenerate answers a task's tolerance must refuse, built for the inputs of a run
// (`inputs`: laid out like the harness's inputs.bin, per size set, per trial, each input and
// inout argument in signature order) and checked against its reference outputs: every output
// all zeros, every output left as the harness's poison, and every output a copy of one input
// (its leading elements, zeros past its end). Returns what passed ("every output all zeros",
// "output 'y' a copy of input 'x'"), or nothing when each of them fails as it must.
std::optional<std::string> degenerate_answer_passes(const task_spec& task, int trials,
                                                    std::string_view inputs,
                                                    std::string_view reference);

} // namespace leap::env
