// Static guards run before anything is compiled (the cheap half of reward-hacking defence):
// the entry point must exist, libraries the task does not allow and process/file/network/system
// calls are rejected with a reason the model can act on. Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leap::env {

struct guard_result {
  bool ok = true;
  std::string reason; // "forbidden call 'fopen' on line 12: candidates may not ..."
  int line = 0;
};

// Replaces comments and string/char literal contents by spaces, keeping newlines (so offsets and
// line numbers stay valid). Raw string literals included.
std::string blank_comments_and_strings(std::string_view source);

guard_result static_check(std::string_view source, const std::vector<std::string>& allowed_libraries);

} // namespace leap::env
