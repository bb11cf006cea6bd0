// Extracts the candidate's CUDA source from a model completion. Robust to what small models
// write: prose around the block, a missing closing fence, no fence at all, a trailing special
// token. Never throws; a completion with nothing usable gives ok=false and a reason that the
// caller turns into a `rejected` verdict. Pure; callable from any thread.
#pragma once

#include <string>
#include <string_view>

namespace leap::policy {

struct extracted {
  bool ok = false;
  std::string code;   // ends with one '\n' when ok
  std::string reason; // why not ok (for the rejected verdict's feedback)
};

// Rules, in order:
//  1. The text is cut at the first special role token (<|eos|>, <|user|>, ...), if any.
//  2. Fenced blocks tagged cuda, cu, cuh, c++, cpp, cxx, cc, c or untagged (case-insensitive):
//     the first one that mentions `solution`, else the first non-empty one. A block without its
//     closing fence runs to the end of the text.
//  3. No usable fenced block: if the text mentions `solution`, the code runs from the line of the
//     first `#include`, `__global__` or `extern "C"` to the last '}'.
//  4. Otherwise ok=false.
extracted extract_code(std::string_view completion);

} // namespace leap::policy
