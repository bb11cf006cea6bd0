#include "common/allocator.hpp"

#include <cstdlib> // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace leap {

bool tune_allocator_for_tensors() {
#if defined(__GLIBC__)
  constexpr int one_gib = 1 << 30;
  bool ok = mallopt(M_MMAP_THRESHOLD, mmap_threshold_bytes) == 1;
  ok = mallopt(M_TRIM_THRESHOLD, one_gib) == 1 && ok;
  ok = mallopt(M_TOP_PAD, 256 << 20) == 1 && ok;
  return ok;
#else
  return true;
#endif
}

} // namespace leap
