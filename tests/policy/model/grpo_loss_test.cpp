// Hand-computed cases for the GRPO loss: clipping with separate low/high ranges, the k3 KL,
// token-mean vs Dr.GRPO aggregation, padding ignored, gradients only through unclipped tokens.
#include "policy/model/grpo_loss.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace leap::policy;

namespace {
torch::Tensor t(std::vector<float> v, std::int64_t rows) {
  auto x = torch::tensor(v);
  return x.view({rows, static_cast<std::int64_t>(v.size()) / rows});
}
} // namespace

TEST(GrpoLoss, ClippedSurrogateTokenMean) {
  // Ratios: e^0 = 1, e^0.5 = 1.6487 (above 1 + 0.28), e^-0.5 = 0.6065 (below 1 - 0.2).
  auto old = t({0, 0, 0, 0}, 1);
  auto logp = t({0, 0.5f, -0.5f, 0}, 1).requires_grad_();
  auto adv = t({1, 1, -1, 2}, 1);
  auto mask = t({1, 1, 1, 0}, 1); // the last token is padding
  grpo_loss_config cfg;
  auto out = grpo_loss(logp, old, {}, adv, mask, cfg);
  // Token 1: -min(1*1, 1*1) = -1. Token 2: -min(1.6487, 1.28) = -1.28.
  // Token 3 (A = -1): -min(-0.6065, -0.8) = 0.8. Mean over 3 real tokens: (-1 - 1.28 + 0.8) / 3.
  EXPECT_NEAR(out.loss.item<double>(), (-1 - 1.28 + 0.8) / 3, 1e-5);
  EXPECT_NEAR(out.clip_fraction, 2.0 / 3, 1e-6);
  EXPECT_NEAR(out.ratio_mean, (1 + std::exp(0.5) + std::exp(-0.5)) / 3, 1e-5);
  out.loss.backward();
  auto g = logp.grad();
  // d/dlogp of -ratio*A/3 at ratio 1, A 1: -1/3; clipped tokens and padding: 0.
  EXPECT_NEAR(g[0][0].item<double>(), -1.0 / 3, 1e-6);
  EXPECT_EQ(g[0][1].item<double>(), 0.0);
  EXPECT_EQ(g[0][2].item<double>(), 0.0);
  EXPECT_EQ(g[0][3].item<double>(), 0.0);
}

TEST(GrpoLoss, K3KlAndDrGrpoAggregation) {
  auto old = t({0, 0, 0, 0}, 2);
  auto logp = t({0, 0, 0, 0}, 2);
  auto ref = t({0.1f, 0, 0, 0}, 2);
  auto adv = t({1, 1, 1, 1}, 2);
  auto mask = t({1, 1, 1, 0}, 2);
  grpo_loss_config cfg;
  cfg.kl_coef = 0.5;
  auto out = grpo_loss(logp, old, ref, adv, mask, cfg);
  // k3 at d = 0.1: e^0.1 - 0.1 - 1 = 0.0051709; 0 elsewhere. Mean over 3 real tokens.
  double k3 = std::exp(0.1) - 0.1 - 1;
  EXPECT_NEAR(out.kl, k3 / 3, 1e-6);
  EXPECT_NEAR(out.loss.item<double>(), (-3 + 0.5 * k3) / 3, 1e-6);
  cfg.aggregation = loss_aggregation::dr_grpo;
  cfg.dr_grpo_norm_tokens = 4;
  out = grpo_loss(logp, old, ref, adv, mask, cfg);
  // Sum over real tokens divided by rows (2) * 4.
  EXPECT_NEAR(out.loss.item<double>(), (-3 + 0.5 * k3) / 8, 1e-6);
  EXPECT_NEAR(out.pg_loss, -3.0 / 8, 1e-6);
}
