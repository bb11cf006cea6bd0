// HELPER: before any edit, build or commit, read /work/notes/helper_common.md (the shared rules: build lock, commit only your files with `git commit -- paths`, no docs edits, report format). Delete this line when you fill the file.
// (in progress) Cost benchmarks of the CPU emulation: half.
#include "bench/emulation_features.hpp"

#include <benchmark/benchmark.h>

namespace leap::bench {

void register_emulation_half_benchmarks() {}

} // namespace leap::bench
