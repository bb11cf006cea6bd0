// The source rewriter of leap's CUDA-on-CPU emulation: turns a candidate's CUDA translation unit
// into C++ that g++ compiles against the shim headers in env/cpu_emu/include and links with
// leap_emu_rt. Launches `K<<<cfg>>>(args)` become runtime calls, `__shared__` becomes storage
// shared by a block's fibers, `extern __shared__` arrays (specifiers in any order) point at the
// dynamic shared buffer, `volatile T*` (T arithmetic or a class) becomes a lockstep pointer (volatile_rewrite.hpp) and supported inline PTX
// becomes runtime calls (ptx_rewrite.hpp). Unsupported features are looked for only in the
// lines g++ will compile (conditionals.hpp).
// Pure function, thread-safe; called by leap's CPU executor from any thread.
#pragma once

#include <string>
#include <string_view>

namespace leap::emu {

struct rewrite_output {
  bool ok = false;
  std::string code;   // C++ for g++ (valid when ok)
  std::string error;  // why the emulation cannot build it (unsupported feature and line)
  int launches = 0;   // number of <<<...>>> launches rewritten
  bool uses_sync = false;  // barriers, warp shuffles/votes/reductions seen anywhere in the TU
  int volatile_pointers = 0;
  int inline_asm = 0;              // asm statements turned into emulation calls (leap_emu/ptx.h)
  int inline_asm_unsupported = 0;  // asm statements the emulation cannot run (then !ok)  // `volatile T*` turned into lockstep pointers (leap_emu/volatile.h)
};

// Turns CUDA source text into C++ for the emulation. `filename` goes into a leading #line so g++
// diagnostics point at the user's .cu file and lines (line numbers are preserved). Comments,
// string and char literals (raw strings too) are skipped.
rewrite_output rewrite_cuda_source(std::string_view source, std::string_view filename);

}  // namespace leap::emu
