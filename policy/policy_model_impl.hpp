// The private state behind the policy_model facade (policy_model.hpp): the decoder, its
// optimizer, and the frozen reference of the KL penalty. Included only by policy/*.cpp files
// that implement the facade (they pull in LibTorch); the same threading rules as the facade.
#pragma once

#include "policy/decoder.hpp"
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

} // namespace leap::policy
