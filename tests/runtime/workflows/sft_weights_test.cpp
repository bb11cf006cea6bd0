// sft_task_weights: the weight a warm-start corpus example is drawn with, by task name, from
// sft.bundled_weight and sft.generated_family_weights.
#include "runtime/workflows/sft_weights.hpp"

#include <gtest/gtest.h>

using namespace leap;

TEST(SftTaskWeights, BundledTasksTakeBundledWeightGeneratedOnesTheirFamilys) {
  config::sft_section sft;
  sft.bundled_weight = 10.0;
  sft.generated_family_weights = {"red=6", "scan=2.5"};
  const runtime::sft_task_weights w(sft);
  EXPECT_DOUBLE_EQ(w.of("relu"), 10.0);           // written by hand
  EXPECT_DOUBLE_EQ(w.of("softmax_rows"), 10.0);
  EXPECT_DOUBLE_EQ(w.of("gen_red_t00001"), 6.0);  // every wording of a listed family
  EXPECT_DOUBLE_EQ(w.of("gen_red_n00047"), 6.0);
  EXPECT_DOUBLE_EQ(w.of("gen_scan_p00003"), 2.5);
  EXPECT_DOUBLE_EQ(w.of("gen_ew_t00003"), 1.0);   // a family not listed
}

TEST(SftTaskWeights, DefaultsWeighEveryTaskOne) {
  const runtime::sft_task_weights w{config::sft_section{}};
  EXPECT_DOUBLE_EQ(w.of("relu"), 1.0);
  EXPECT_DOUBLE_EQ(w.of("gen_red_t00001"), 1.0);
}
