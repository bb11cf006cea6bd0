// sampler: batched sampling of one GRPO group (one prompt x G completions) from the decoder with
// a KV cache: the prompt is prefilled once and its cache shared by the G rows (float32 CPU
// models, through the fused decode_step.hpp; elsewhere the cache is expanded to G rows and
// stepped with forward_cached). Temperature, top-p,
// max new tokens, stop token ids and stop strings; deterministic for a given seed (on a given
// device and LibTorch build). Called by the generator actors. LibTorch-free header.
//
// Threads: sample_group only reads the model (see decoder.hpp); several threads may sample from
// one model at once as long as nobody updates its weights meanwhile.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace leap::policy {

class decoder_impl;

enum class finish_reason { eos, stop, length };
const char* finish_reason_name(finish_reason r);  // "eos", "stop", "length"

struct sampling_params {
  int group_size = 8;            // G
  double temperature = 1.0;      // <= 0: greedy (argmax); log-probs then at temperature 1
  double top_p = 1.0;            // nucleus: smallest set of tokens with mass >= top_p (always >= 1 token)
  int max_new_tokens = 256;
  // A sampled token that is one of the config's eos ids (model_config::is_eos) ends the sample
  // with finish_reason::eos; one of
  // these ends it with finish_reason::stop. Either way the token is kept (with its log-prob).
  std::vector<int> stop_token_ids;
  // Checked after every token on decode(completion tokens so far); the first match ends the
  // sample with finish_reason::stop. The token that completed the match is kept; `text` is cut
  // right after the stop string (the stop string is included). Needs `decode`.
  std::vector<std::string> stop_strings;
  std::function<std::string(const std::vector<int>&)> decode;  // optional unless stop_strings
  std::uint64_t seed = 0;
  // Optional: one seed per row (sample_group: G; sample_batch: one per prompt). Each row then
  // draws from its own generator, so a row's tokens depend on its seed and its logits only, not
  // on the other rows of the batch (`seed` is unused). Empty: one generator seeded with `seed`
  // for the whole batch, as before. Greedy decoding and the logits are the same either way.
  std::vector<std::uint64_t> row_seeds;
  // > 0: each sample also gets, for every token, the `top_logprobs` most likely tokens of the
  // distribution its log-prob is from (sample::top_logprobs), most likely first.
  int top_logprobs = 0;
  // Optional: called on the sampling thread for each token as it is drawn (row: the sample's
  // index in the result; the eos or stop token too; `top`: its top_logprobs alternatives, empty
  // unless asked), before the next step runs: streaming. It must not throw, and should be quick
  // (it delays the step).
  std::function<void(std::size_t row, int token, float logprob,
                     const std::vector<std::pair<int, float>>& top)>
    on_token;
};

// The seed of sequence `index` of a job seeded with `seed` (splitmix64 of the two): the per-row
// seeds of sampling_params::row_seeds as the generators and `leap serve --checkpoint` derive
// them (prompt i of a generation job has seed job.seed + i; its sample j, index j), so the same
// job sampled in process or through an OpenAI-compatible leap server draws the same tokens.
std::uint64_t sequence_seed(std::uint64_t seed, std::uint64_t index);

struct sample {
  std::vector<int> tokens;      // completion token ids (prompt not included)
  std::vector<float> logprobs;  // one per token, see below
  // With sampling_params::top_logprobs = k > 0: per token, the k most likely (token, log-prob)
  // pairs of the same distribution as `logprobs`, most likely first; else empty.
  std::vector<std::vector<std::pair<int, float>>> top_logprobs;
  int length = 0;               // == tokens.size()
  finish_reason finish = finish_reason::length;
  std::string text;             // decode(tokens), cut after the stop string; empty without decode
};

// Behaviour log-probs: logprobs[i] = log softmax(logits / temperature)[tokens[i]], the
// temperature-scaled distribution BEFORE top-p truncation. This is exactly what
// token_logprobs(model, prompt + tokens, temperature) recomputes (decoder.hpp), so the learner's
// importance ratio is 1 on-policy; with top_p < 1 it is the policy's probability, not the
// (renormalised) probability of the truncated distribution the token was drawn from.
//
// Errors (as values): empty prompt, token id outside the vocabulary, group_size < 1,
// max_new_tokens < 0, top_p outside (0, 1], stop strings without decode, prompt longer than
// max_position_embeddings, LibTorch failures. A sample also ends with finish_reason::length when
// it reaches max_position_embeddings.
result<std::vector<sample>> sample_group(decoder_impl& model, const std::vector<int>& prompt,
                                         const sampling_params& params);

// One sample for each of several different prompts (e.g. the next turns of different failed
// attempts), decoded as one left-padded batch. group_size is ignored; the same log-prob
// convention as sample_group.
result<std::vector<sample>> sample_batch(decoder_impl& model,
                                         const std::vector<std::vector<int>>& prompts,
                                         const sampling_params& params);

} // namespace leap::policy
