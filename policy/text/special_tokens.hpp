// The special tokens of leap's prompt format: role markers and sequence control. The trainer adds
// them to every tokenizer it builds (as tokenizer.json added_tokens, after the BPE vocabulary);
// prompt.cpp writes them as text that encode(..., allow_special=true) turns into single ids.
// Constants only; usable from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leap::policy::special {

inline constexpr std::string_view bos = "<|bos|>";
inline constexpr std::string_view eos = "<|eos|>"; // ends an assistant turn; the stop token
inline constexpr std::string_view pad = "<|pad|>";
inline constexpr std::string_view user = "<|user|>";
inline constexpr std::string_view assistant = "<|assistant|>";

// In id order as the trainer appends them.
inline std::vector<std::string> all() {
  return {std::string(bos), std::string(eos), std::string(pad), std::string(user),
          std::string(assistant)};
}

} // namespace leap::policy::special
