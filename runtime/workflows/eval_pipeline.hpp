// The evaluation pipeline the evaluation and sampling workflows share (evaluation.hpp,
// sample_failures.hpp): G attempts at each task from a checkpoint through the pipeline of `leap
// train` (runtime/pipeline/assembly.hpp). Internal to runtime/workflows: only evaluation.cpp and
// sample_failures.cpp include it (it brings in the actor pipeline's headers). Main thread;
// callbacks run on actor threads.
#pragma once

#include "common/result.hpp"
#include "policy/text/prompt.hpp"
#include "runtime/pipeline/assembly.hpp"
#include "runtime/pipeline/services.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::policy {
class tokenizer;
} // namespace leap::policy

namespace leap::runtime::eval_detail {

// The checkpoint's policy as the evaluation pipeline needs it.
struct eval_policy {
  std::shared_ptr<const policy::tokenizer> tok;
  policy::chat_format format = policy::chat_format::leap;
};

using group_callback = std::function<void(const msg::group_result&, const eval_policy&)>;

// Where the samples come from: generation.source (the checkpoint, or the [openai] server), or
// always the checkpoint (a warm start sampling from itself).
enum class sampler { configured, checkpoint };

// G attempts at each of `names` from the checkpoint in `dir`, sampled with `ec`'s settings (group
// size, turns, temperature, token budget, seed) through the pipeline of `leap train`; blocks
// until every group has finished. `on_group` (optional) sees each finished group.
result<pipeline_outcome> run_eval_pipeline(services& svc, const std::string& dir,
                                           const std::vector<std::string>& names,
                                           const config::eval_section& ec, sampler from,
                                           bool show, group_callback on_group);

} // namespace leap::runtime::eval_detail
