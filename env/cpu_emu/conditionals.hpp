// Conditional inclusion (#if/#ifdef/#ifndef/#elif/#else/#endif, #define/#undef) as g++ sees it
// when it compiles a rewritten candidate for the CPU emulation: the rewriter's feature check
// asks which lines are live, so code in a disabled block (bf16 behind `#if defined(USE_BF16)`,
// an sm_80 path behind `#if __CUDA_ARCH__ >= 800`) does not make valid code unsupported.
// Conditions it cannot evaluate (function-like macros, unknown operators) keep every branch
// live, so the check is never weaker than without preprocessing. Pure, thread-safe.
#pragma once

#include <string>
#include <vector>

namespace leap::emu {

struct directive {
  int line = 0;      // line of the '#'
  int last_line = 0; // last line it spans (continuations)
  std::string text;  // the tokens after '#', joined by single spaces where they were apart
};

// live[l] for l in 1..max_line: the line is compiled (directive lines count as live).
std::vector<bool> live_lines(const std::vector<directive>& directives, int max_line);

}  // namespace leap::emu
