// common/allocator.hpp under the allocator the binary links: test_common_allocator with glibc's
// malloc, test_common_allocator_tcmalloc with tcmalloc (when libtcmalloc_minimal is installed).
// LEAP_EXPECT_ALLOCATOR names the one each binary must find.
#include "common/allocator.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using leap::heap_allocator;

TEST(Allocator, FindsTheAllocatorTheBinaryLinks) {
  EXPECT_STREQ(leap::to_string(leap::active_heap_allocator()), LEAP_EXPECT_ALLOCATOR);
  EXPECT_TRUE(leap::tune_allocator_for_tensors());
}

// Blocks of a few MiB, touched, then every other one freed (holes between live blocks) and the
// last (a free top). Under glibc with leap's settings the freed blocks stay resident for reuse;
// under tcmalloc with TCMALLOC_AGGRESSIVE_DECOMMIT=true (set by CTest for the tcmalloc binary) they
// go back to the kernel at once. The figures show the live blocks in use either way.
TEST(Allocator, FreedBlocksStayUnderGlibcAndGoBackUnderTcmalloc) {
  ASSERT_TRUE(leap::tune_allocator_for_tensors());
  constexpr std::size_t block = 4 << 20, count = 16; // 64 MiB, below glibc's 32 MiB threshold each
  auto before = leap::heap_figures_now();
  ASSERT_TRUE(before.ok()) << before.err().message;
  std::vector<std::unique_ptr<char[]>> blocks;
  for (std::size_t i = 0; i < count; ++i) {
    blocks.push_back(std::make_unique<char[]>(block));
    std::memset(blocks.back().get(), 1, block); // resident, not just reserved
  }
  auto held = leap::heap_figures_now();
  ASSERT_TRUE(held.ok());
  EXPECT_GE(held.value().in_use_bytes, before.value().in_use_bytes + count * block);
  EXPECT_GE(held.value().resident_bytes, held.value().in_use_bytes);
  for (std::size_t i = 0; i < count; i += 2) blocks[i].reset();
  blocks.back().reset();
  const std::size_t freed_bytes = (count / 2 + 1) * block;
  auto freed = leap::heap_figures_now();
  ASSERT_TRUE(freed.ok());
  EXPECT_LE(freed.value().in_use_bytes + freed_bytes, held.value().in_use_bytes + block / 4);
  if (freed.value().allocator == heap_allocator::tcmalloc) {
    const char* decommit = std::getenv("TCMALLOC_AGGRESSIVE_DECOMMIT");
    if (!decommit || std::string(decommit) != "true")
      GTEST_SKIP() << "run with TCMALLOC_AGGRESSIVE_DECOMMIT=true (as CTest does)";
    EXPECT_LE(freed.value().resident_bytes + freed_bytes, held.value().resident_bytes + block / 4);
    EXPECT_LT(freed.value().free_bytes, block);
  } else {
    EXPECT_GE(freed.value().resident_bytes + block / 4, held.value().resident_bytes);
    EXPECT_GE(freed.value().free_bytes, freed_bytes - block / 4);
  }
}

// The resident set grows by what the process touches: 64 MiB written, at least 48 MiB more.
TEST(Allocator, ResidentSetFollowsTouchedMemory) {
  auto before = leap::process_resident_bytes();
  ASSERT_TRUE(before.ok()) << before.message();
  EXPECT_GT(before.value(), 0u);
  constexpr std::size_t size = 64 << 20;
  auto block = std::make_unique<char[]>(size);
  std::memset(block.get(), 1, size);
  auto after = leap::process_resident_bytes();
  ASSERT_TRUE(after.ok());
  EXPECT_GE(after.value(), before.value() + (48u << 20));
  EXPECT_EQ(block[size - 1], 1);
}

} // namespace
