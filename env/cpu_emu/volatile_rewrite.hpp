// The rewriter pass for volatile pointers (see leap_emu/volatile.h for why): `volatile T*` with
// T an arithmetic type or a template parameter becomes ::leap_emu::vptr<T>; a parameter of a
// function definition keeps its type under a new name and the body starts with a vptr of the
// old name (so template argument deduction still sees `volatile T*`). Pure, thread-safe; used by
// rewriter.cpp.
#pragma once

#include <cstddef>
#include <vector>

#include "env/cpu_emu/lexer.hpp"

namespace leap::emu {

// Rewrites the volatile pointer declaration or cast whose `volatile` is token `i`; appends the
// edits and returns true, or returns false (left as it is: not a pointer, a struct or vector
// type, a volatile shared array, a prototype's parameter).
bool rewrite_volatile_pointer(const token_view& v, std::size_t i, std::vector<edit>& edits);

// `__shared__ volatile T name[N];` (or `volatile __shared__ ...`) inside a function, T
// arithmetic: the array keeps its storage under a new name and `name` becomes a vptr to it.
// `i` is the `__shared__` token; on success returns true and sets `last` to the ';'.
bool rewrite_volatile_shared_array(const token_view& v, std::size_t i, std::vector<edit>& edits, std::size_t& last);

}  // namespace leap::emu
