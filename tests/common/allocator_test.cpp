// common/allocator: with leap's heap settings freed memory stays in the process (for speed), and
// release_free_heap() gives the free pages back, so a long run's resident memory is bounded.
#include "common/allocator.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <memory>
#include <vector>

namespace {

long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

} // namespace

// 96 MiB of 64 KiB blocks (on the heap: below the 32 MiB mmap threshold), written, then freed
// except every 16th, so the free memory is holes between live blocks, not the heap's top: the
// settings keep it resident, and only release_free_heap() returns it.
TEST(Allocator, ReleaseFreeHeapReturnsTheHolesTheSettingsKeep) {
  ASSERT_TRUE(leap::tune_allocator_for_tensors());
  constexpr std::size_t block = 64 << 10, count = 1536;
  std::vector<std::unique_ptr<char[]>> blocks;
  for (std::size_t i = 0; i < count; ++i)
    blocks.push_back(std::make_unique<char[]>(block)); // value-initialised: every page touched
  const long full = resident_kib();
  for (std::size_t i = 0; i < count; ++i)
    if (i % 16 != 0)
      blocks[i].reset();
  const long kept = resident_kib();
  EXPECT_GT(kept, full - 16 * 1024) << "the settings should keep freed heap memory resident";
  EXPECT_TRUE(leap::release_free_heap());
  const long released = resident_kib();
  EXPECT_GT(kept - released, 64 * 1024) << "resident KiB: " << full << " full, " << kept
                                        << " after the frees, " << released << " after the release";
}
