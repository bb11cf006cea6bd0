// Tests of policy/model/micro_batches.hpp: the learner's micro batches stay within the attention
// memory budget (what bounds a GRPO step's peak heap, whatever the sequences' lengths), keep the
// sequence cap, and cover the mini batch in order. Torch-free; single-threaded.
#include "policy/model/micro_batches.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace leap::policy {
namespace {

// Every sequence in exactly one micro batch, in order, none empty.
void expect_covers(const std::vector<micro_batch_span>& plan, std::size_t n) {
  std::size_t next = 0;
  for (const auto& s : plan) {
    EXPECT_EQ(s.first, next);
    EXPECT_LT(s.first, s.last);
    next = s.last;
  }
  EXPECT_EQ(next, n);
}

TEST(MicroBatches, ShortSequencesKeepTheSequenceCap) {
  std::vector<std::int64_t> lengths(20, 100);
  auto plan = plan_micro_batches(lengths, 8, attention_bytes_per_position(1, 2),
                                 micro_batch_attention_budget);
  expect_covers(plan, lengths.size());
  ASSERT_EQ(plan.size(), 3u); // 8 + 8 + 4, as a plain cap of 8 cut them
  EXPECT_EQ(plan[0].last - plan[0].first, 8u);
  EXPECT_EQ(plan[2].last - plan[2].first, 4u);
}

TEST(MicroBatches, LongSequencesStayWithinTheBudget) {
  // The soak's tiny policy (1 layer, 2 heads) with the lengths it reached: 8 sequences of 1600
  // tokens would hold 8 * 1600^2 * 24 B = 469 MiB of attention; the budget allows 256 MiB.
  const auto per = attention_bytes_per_position(1, 2);
  std::vector<std::int64_t> lengths = {1600, 1600, 1590, 1500, 1400, 1200, 1000, 900, 400, 300, 200, 100};
  auto plan = plan_micro_batches(lengths, 8, per, micro_batch_attention_budget);
  expect_covers(plan, lengths.size());
  for (const auto& s : plan) {
    const auto t = lengths[s.first];
    const auto b = static_cast<std::int64_t>(s.last - s.first);
    EXPECT_LE(b, 8);
    EXPECT_LE(b * t * t * per, micro_batch_attention_budget) << "micro batch at " << s.first;
    // Greedy: the next sequence would have broken the cap or the budget.
    if (s.last < lengths.size() && b < 8) {
      EXPECT_GT((b + 1) * t * t * per, micro_batch_attention_budget);
    }
  }
  EXPECT_EQ(plan[0].last - plan[0].first, 4u); // 4 * 1600^2 * 24 B = 234 MiB; 5 would be 293
}

TEST(MicroBatches, ASequenceOverTheBudgetIsAMicroBatchOfItsOwn) {
  std::vector<std::int64_t> lengths = {10000, 10000, 50};
  auto plan = plan_micro_batches(lengths, 8, attention_bytes_per_position(3, 6),
                                 micro_batch_attention_budget);
  expect_covers(plan, lengths.size());
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[2].first, 2u);
}

TEST(MicroBatches, EmptyAndDegenerateInputs) {
  EXPECT_TRUE(plan_micro_batches({}, 8, 24, micro_batch_attention_budget).empty());
  std::vector<std::int64_t> lengths = {5, 4, 3};
  auto plan = plan_micro_batches(lengths, 0, 24, micro_batch_attention_budget); // cap 0 means 1
  expect_covers(plan, lengths.size());
  EXPECT_EQ(plan.size(), 3u);
}

} // namespace
} // namespace leap::policy
