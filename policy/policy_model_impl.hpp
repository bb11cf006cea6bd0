// The private state behind the policy_model facade (policy_model.hpp): the decoder, its
// optimizer, and the frozen reference of the KL penalty; and the completion-only logits that SFT
// and the GRPO step share. Included only by policy/*.cpp files
// that implement the facade (they pull in LibTorch); the same threading rules as the facade.
#pragma once

#include "policy/model/decoder.hpp"
#include "policy/policy_model.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <memory>

namespace leap::policy {

struct policy_model::impl {
  decoder model{nullptr};
  std::unique_ptr<torch::optim::AdamW> opt;
  decoder reference{nullptr};  // frozen; only when a KL penalty is used
  std::int64_t step = 0;
};

// Next-token logits at the trained positions only: ids [B, T], mask [B, T], sel [N] (flat
// indices into [B, T-1] of the positions whose next token is trained on) -> logits [N, V]
// (float) and their targets [N]. Prompt positions skip the vocabulary projection and softmax,
// a large share of a small model's work.
struct selected_logits {
  torch::Tensor logits;  // [N, V]
  torch::Tensor targets; // [N]
};
selected_logits next_token_logits(decoder_impl& m, const torch::Tensor& ids,
                                  const torch::Tensor& mask, const torch::Tensor& sel);

} // namespace leap::policy
