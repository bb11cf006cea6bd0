// The rewriter passes for volatile pointers and __shared__ declarations (see leap_emu/volatile.h
// for why): `volatile T*` with T an arithmetic type, a class or a template parameter becomes
// ::leap_emu::vptr<T>; a parameter of a function definition keeps its type under a new name and
// the body starts with a vptr of the old name (so template argument deduction still sees
// `volatile T*`). Pure, thread-safe; used by rewriter.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "env/cpu_emu/lexer.hpp"

namespace leap::emu {

// Rewrites the volatile pointer declaration or cast whose `volatile` is token `i`; appends the
// edits and returns true, or returns false (left as it is: not a pointer, a CUDA vector type,
// a volatile shared array, a prototype's parameter).
bool rewrite_volatile_pointer(const token_view& v, std::size_t i, std::vector<edit>& edits);

// A `__shared__` declaration, specifiers and attributes in any order nvcc accepts; `i` is its
// `__shared__` token (the declaration may start before it: `extern float __shared__ s[];`).
// - `extern`: each `name[]` (also `name[][N]`) becomes a pointer to the launch's dynamic shared
//   buffer, so every dynamic array of a launch aliases the same 256-byte aligned bytes; with
//   `volatile` and a type a vptr can stand for, a lockstep pointer to it.
// - `volatile T name[N];` inside a function, T arithmetic or a class: the array keeps its
//   storage (and alignment) under a new name and `name` becomes a vptr to it.
// - anything else: `__shared__` becomes block storage (static thread_local) in place.
// Appends the edits; `last` is the last token handled (the ';' of a rewritten declaration).
struct shared_rewrite {
  std::size_t last = 0;
  int line = 0;       // first line of the declaration
  int lockstep = 0;   // arrays that became lockstep pointers
  std::string error;  // an extern __shared__ declaration the emulation cannot rewrite
};
shared_rewrite rewrite_shared_declaration(const token_view& v, std::size_t i, std::vector<edit>& edits);

}  // namespace leap::emu
