// The trainer's task bookkeeping: per-epoch orders are permutations, deterministic by seed and
// different across epochs; consumed tasks roll the epoch over; the JSON form round-trips.
#include "actors/task_progress.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace leap::actors;

TEST(TaskProgress, EpochOrderIsASeededPermutation) {
  auto a = epoch_order(22, 7, 0);
  auto b = epoch_order(22, 7, 0);
  auto c = epoch_order(22, 7, 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 22; ++i)
    EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);
}

TEST(TaskProgress, CompleteEpochsRollOver) {
  task_progress p;
  p.mark(0, 2, 3);
  p.mark(0, 0, 3);
  EXPECT_EQ(p.epoch, 0);
  p.mark(1, 1, 3); // a group of the next epoch finished first (async)
  p.mark(0, 1, 3);
  EXPECT_EQ(p.epoch, 1);
  EXPECT_EQ(p.consumed.count(0), 0u);
  EXPECT_EQ(p.consumed.at(1), (std::set<int>{1}));
}

TEST(TaskProgress, JsonRoundTrips) {
  task_progress p;
  p.epoch = 4;
  p.consumed[4] = {0, 5};
  p.consumed[5] = {2};
  task_progress q;
  ASSERT_TRUE(progress_from_json(progress_to_json(p), q));
  EXPECT_EQ(q.epoch, 4);
  EXPECT_EQ(q.consumed, p.consumed);
  EXPECT_FALSE(progress_from_json("{\"epoch\": \"x\"}", q));
  EXPECT_EQ(q.epoch, 4); // unchanged on error
}
