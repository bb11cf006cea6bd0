// edit_answer: a later turn's SEARCH/REPLACE answer (policy/text/code_edit.hpp) applied to the
// attempt's latest code, for the two places that take a model's answer to a rollout: the
// gatekeeper (training, eval, bench) and the environment service (`leap serve`). Pure; any
// thread.
#pragma once

#include "algo/rollout.hpp"
#include "common/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace leap::actors {

// The whole file the edits make of the code of the attempt's last turn that had any; an error
// is why the turn is rejected (the answer's fault). nullopt when no turn had code yet: the
// answer then edits nothing, and the caller judges it as it would any other answer.
std::optional<result<std::string>> apply_edit_answer(const std::vector<algo::rollout_turn>& turns,
                                                     const std::string& answer);

} // namespace leap::actors
