// HELPER: before any edit, build or commit, read /work/notes/helper_common.md (the shared rules: build lock, commit only your files with `git commit -- paths`, no docs edits, report format). Delete this line when you fill the file.
// (in progress) Tests of the CPU emulation: half.
#include <gtest/gtest.h>

#include "emu_program.hpp"
