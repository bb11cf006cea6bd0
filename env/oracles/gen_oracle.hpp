// The LibTorch oracle of the generated task families: an interpreter of the operator IR
// (env/taskgen/ir.hpp) with stock LibTorch ops in float64, independent of the CUDA reference the
// generator renders from the same IR. `leap tasks verify` uses it for every generated task (a
// task whose reference starts with the generator's operator line). Any thread; no shared state.
// LibTorch stays out of this header.
#pragma once

#include "common/result.hpp"
#include "env/taskgen/ir.hpp"
#include "env/oracles/task_oracles.hpp"

#include <string_view>

namespace leap::oracles {

// Computes the outputs of `op` into c.outputs (pre-sized by the caller) from c.inputs and c.ints.
// Errors (missing buffer, wrong size, LibTorch failure) come back as values.
leap::result<void> run_generated_oracle(const taskgen::gen_op& op, oracle_case& c);

// The oracle for any task by its reference source: the generated oracle when the reference is a
// generated one, else the bundled oracle named `task_name`. False when neither applies.
bool has_any_oracle(std::string_view task_name, std::string_view reference_source);
leap::result<void> run_any_oracle(std::string_view task_name, std::string_view reference_source,
                                  oracle_case& c);

} // namespace leap::oracles
