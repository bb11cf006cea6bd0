// The GRPO learner's loss (docs/design.md "Learner"): token-level clipped surrogate with separate
// low/high clip ranges (clip-higher), optional k3 KL penalty to a frozen reference policy, and
// token-mean or Dr.GRPO (constant-normaliser) aggregation. Called by the learner only, on its
// own thread. Tensors: per completion token, padded rows marked by `mask`.
#pragma once

#include "policy/model/aggregation.hpp"

#include <torch/torch.h>

namespace leap::policy {


struct grpo_loss_config {
  double clip_low = 0.2;    // ratio >= 1 - clip_low
  double clip_high = 0.28;  // ratio <= 1 + clip_high (clip-higher: larger than clip_low)
  double kl_coef = 0.0;     // 0 = no reference policy needed
  loss_aggregation aggregation = loss_aggregation::token_mean;
  // Dr.GRPO divides the summed token losses by rows * this constant (the generation budget)
  // instead of the number of real tokens, which removes the length bias of token-mean.
  double dr_grpo_norm_tokens = 512;
};

struct grpo_loss_out {
  torch::Tensor loss;        // scalar, differentiable w.r.t. logp
  double kl = 0;             // mean k3 KL over real tokens (0 without a reference)
  double clip_fraction = 0;  // share of real tokens whose ratio was clipped
  double ratio_mean = 0;
  double pg_loss = 0;        // policy-gradient part, same aggregation
};

// logp, old_logp, advantages, mask: [B, T]; ref_logp: [B, T] or undefined (then kl_coef must
// be 0). mask is 1 for real completion tokens, 0 for padding.
grpo_loss_out grpo_loss(const torch::Tensor& logp, const torch::Tensor& old_logp,
                        const torch::Tensor& ref_logp, const torch::Tensor& advantages,
                        const torch::Tensor& mask, const grpo_loss_config& cfg);

} // namespace leap::policy
