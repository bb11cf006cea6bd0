#include "actors/edit_answer.hpp"

#include "policy/text/code_edit.hpp"

#include <algorithm>

namespace leap::actors {

std::optional<result<std::string>> apply_edit_answer(const std::vector<algo::rollout_turn>& turns,
                                                     const std::string& answer) {
  auto last = std::find_if(turns.rbegin(), turns.rend(), [](const auto& t) { return t.has_code; });
  if (last == turns.rend())
    return std::nullopt;
  auto applied = policy::apply_edits(last->code, answer);
  if (!applied)
    return result<std::string>(
      make_error(applied.message() + " (an edit changes your previous answer's code)"));
  return applied;
}

} // namespace leap::actors
