#include "common/allocator.hpp"

#include <cstdlib> // defines __GLIBC__ on glibc systems
#include <dlfcn.h>
#include <unistd.h>

#include <fstream>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace leap {

namespace {

// tcmalloc's C entry points (gperftools' malloc_extension_c.h), present only when it is linked.
using get_property_fn = int (*)(const char*, std::size_t*);
using set_property_fn = int (*)(const char*, std::size_t);

get_property_fn tcmalloc_get_property() {
  static const auto fn = reinterpret_cast<get_property_fn>(
      dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  return fn;
}

set_property_fn tcmalloc_set_property() {
  static const auto fn = reinterpret_cast<set_property_fn>(
      dlsym(RTLD_DEFAULT, "MallocExtension_SetNumericProperty"));
  return fn;
}

std::uint64_t tcmalloc_property(const char* name) {
  std::size_t v = 0;
  return tcmalloc_get_property()(name, &v) ? v : 0;
}

} // namespace

const char* to_string(heap_allocator a) {
  switch (a) {
  case heap_allocator::glibc: return "glibc";
  case heap_allocator::tcmalloc: return "tcmalloc";
  case heap_allocator::other: break;
  }
  return "other";
}

heap_allocator active_heap_allocator() {
  if (tcmalloc_get_property() && tcmalloc_set_property()) return heap_allocator::tcmalloc;
#if defined(__GLIBC__)
  return heap_allocator::glibc;
#else
  return heap_allocator::other;
#endif
}

bool tune_allocator_for_tensors() {
  if (active_heap_allocator() != heap_allocator::glibc) return true;
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

result<heap_figures> heap_figures_now() {
  heap_figures f;
  f.allocator = active_heap_allocator();
  switch (f.allocator) {
  case heap_allocator::tcmalloc: {
    const std::uint64_t heap = tcmalloc_property("generic.heap_size");
    const std::uint64_t unmapped = tcmalloc_property("tcmalloc.pageheap_unmapped_bytes");
    f.in_use_bytes = tcmalloc_property("generic.current_allocated_bytes");
    f.resident_bytes = heap > unmapped ? heap - unmapped : 0;
    f.free_bytes = tcmalloc_property("tcmalloc.pageheap_free_bytes");
    return f;
  }
  case heap_allocator::glibc: {
#if defined(__GLIBC__)
    const struct mallinfo2 mi = mallinfo2();
    f.in_use_bytes = mi.uordblks + mi.hblkhd;
    f.resident_bytes = mi.arena + mi.hblkhd;
    f.free_bytes = mi.fordblks;
    return f;
#else
    break;
#endif
  }
  case heap_allocator::other: break;
  }
  return make_error("heap figures: this process's allocator offers none (neither glibc nor tcmalloc)");
}

result<std::uint64_t> process_resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  if (!(in >> size_pages >> resident_pages))
    return make_error("/proc/self/statm: cannot read this process's resident set");
  return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

} // namespace leap
