// The normalised feedback text a model reads on its next turn (docs/design.md "Multi-turn
// feedback"), and the cleaning of raw compiler output into it. Pure, thread-safe.
#pragma once

#include "env/task.hpp"
#include "env/verdict.hpp"

#include <string>
#include <string_view>

namespace leap::env {

// Replaces temporary paths (work_dir and its parents' spellings) by nothing, so messages read
// "solution.cu(12): error: ...", drops nvcc's noise lines, and keeps at most `max_lines` lines
// starting at the first error (or the first lines when no line says "error").
std::string clean_diagnostics(std::string_view raw, const std::string& work_dir, int max_lines);

// "wrong result for output y (size set rows=37, cols=1000, trial 1): max abs error 3.1 at index
// 17 (expected 0.5, got 3.6); 12 of 37000 elements beyond tolerance (atol 1e-05, rtol 1e-05)".
std::string make_feedback(const verdict& v, const task_spec& task);

std::string describe_size_set(const task_spec& task, int size_set);

} // namespace leap::env
