// The rewriter pass for inline PTX: `asm [volatile] ("..." : outputs : inputs : clobbers)`
// statements made only of the instructions models and libraries actually write become calls of
// the emulation (leap_emu/ptx.h): cp.async.{ca,cg}.shared.global (with the optional source
// size), cp.async.commit_group / wait_group / wait_all, ld.global[.nc] scalar and vector
// loads, mov %laneid, and empty templates (compiler barriers). Anything else is reported, with
// the first unsupported instruction. Pure, thread-safe; used by rewriter.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "env/cpu_emu/lexer.hpp"

namespace leap::emu {

struct asm_rewrite {
  bool ok = false;
  std::size_t last = 0;      // index of the statement's closing ')' (or of `asm` when not parsed)
  std::string unsupported;   // when !ok: the instruction or construct the emulation cannot run
};

// Rewrites the asm statement whose keyword is token `i`, appending edits when it succeeds.
asm_rewrite rewrite_inline_asm(const token_view& v, std::size_t i, std::vector<edit>& edits);

}  // namespace leap::emu
