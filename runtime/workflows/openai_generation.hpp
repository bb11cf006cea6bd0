// generation.source = "openai": sampling from an OpenAI-compatible server instead of the
// in-process policy replicas, as a generation engine the pipeline's generator pool drives like its
// own. Used by the evaluation workflow (runtime/workflows/evaluation.hpp) and `leap bench`.
// Create it on the main thread; the engine's jobs run on the client's threads. No CAF or LibTorch
// in this header.
#pragma once

#include "common/result.hpp"
#include "policy/text/prompt.hpp"
#include "runtime/config/config.hpp"

#include <memory>

namespace leap::policy {
class generation_engine;
class tokenizer;
} // namespace leap::policy

namespace leap::runtime {

// generation.source = "openai": a generation engine whose jobs go to the [openai] server, one
// request per prompt (n = samples per prompt, seed = the job's seed + the prompt's index, as the
// in-process generators seed it), answered with token ids and behaviour log-probs (an answer
// without token ids is re-encoded from its text with `tok`; without log-probs they are 0).
// A choice that stopped (finish_reason "stop") gets `format`'s end-of-turn token appended, the
// token the in-process sampler keeps at the end of a sample.
// Used by `leap eval` and `leap bench`. An error names the key (openai.model, openai.url).
result<std::shared_ptr<policy::generation_engine>>
openai_generation_engine(const config::leap_config& cfg,
                         std::shared_ptr<const policy::tokenizer> tok,
                         policy::chat_format format = policy::chat_format::leap);

} // namespace leap::runtime
