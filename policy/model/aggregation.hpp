// How the GRPO loss aggregates over tokens: `token_mean` (mean over the real completion tokens
// of the batch) or `dr_grpo` (Dr. GRPO: sum / (sequences * a constant token budget), no length
// bias). Plain enum with its config names; pure, any thread. No LibTorch here.
#pragma once

#include <cstdint>
#include <string>

namespace leap::policy {

enum class loss_aggregation : std::uint8_t { token_mean, dr_grpo };

inline const char* to_string(loss_aggregation a) {
  return a == loss_aggregation::dr_grpo ? "dr_grpo" : "token_mean";
}

inline bool parse_loss_aggregation(const std::string& text, loss_aggregation& out) {
  for (auto a : {loss_aggregation::token_mean, loss_aggregation::dr_grpo})
    if (text == to_string(a)) {
      out = a;
      return true;
    }
  return false;
}

} // namespace leap::policy
