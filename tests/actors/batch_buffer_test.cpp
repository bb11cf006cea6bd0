// The learner's batch buffer: in admission order a step is the B groups admitted for it, however
// they finish; in finish order it is the first B to arrive.
#include "actors/batch_buffer.hpp"

#include <gtest/gtest.h>

using namespace leap;
using leap::actors::batch_buffer;
using leap::actors::batch_order;

namespace {

msg::scored_group group(std::uint64_t id) {
  msg::scored_group g;
  g.group.group_id = id;
  g.group.task = "t" + std::to_string(id);
  return g;
}

std::vector<std::uint64_t> ids(const std::vector<msg::scored_group>& b) {
  std::vector<std::uint64_t> out;
  for (auto& g : b)
    out.push_back(g.group.group_id);
  return out;
}

} // namespace

TEST(BatchBuffer, AdmissionOrderWaitsForTheStepsOwnGroups) {
  batch_buffer buf(2, batch_order::admission);
  buf.push(group(3)); // the next step's groups finish first
  buf.push(group(2));
  EXPECT_FALSE(buf.pop());
  buf.push(group(4));
  EXPECT_FALSE(buf.pop()) << "group 1 is still out";
  EXPECT_EQ(buf.size(), 3u);
  buf.push(group(1));
  auto first = buf.pop();
  ASSERT_TRUE(first);
  EXPECT_EQ(ids(*first), (std::vector<std::uint64_t>{1, 2}));
  auto second = buf.pop();
  ASSERT_TRUE(second);
  EXPECT_EQ(ids(*second), (std::vector<std::uint64_t>{3, 4}));
  EXPECT_FALSE(buf.pop());
  EXPECT_EQ(buf.size(), 0u);
}

TEST(BatchBuffer, FinishOrderTakesTheFirstToArrive) {
  batch_buffer buf(2, batch_order::finish);
  buf.push(group(3));
  EXPECT_FALSE(buf.pop());
  buf.push(group(2));
  buf.push(group(5));
  auto first = buf.pop();
  ASSERT_TRUE(first);
  EXPECT_EQ(ids(*first), (std::vector<std::uint64_t>{3, 2}));
  EXPECT_FALSE(buf.pop());
  EXPECT_EQ(buf.size(), 1u);
}

TEST(BatchBuffer, AdmissionIdsStartAtTheGivenFirstId) {
  batch_buffer buf(1, batch_order::admission, 7);
  buf.push(group(8));
  EXPECT_FALSE(buf.pop());
  buf.push(group(7));
  auto a = buf.pop();
  auto b = buf.pop();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->front().group.group_id, 7u);
  EXPECT_EQ(b->front().group.group_id, 8u);
}
