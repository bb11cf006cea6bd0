// The policy as the rest of leap sees it: a Llama-style decoder behind a LibTorch-free facade
// (create/load/save a checkpoint, sample a GRPO group with behaviour log-probs, supervised
// fine-tuning on prompt/completion pairs). Keeps torch headers out of runtime/ and actors/.
// One policy_model is used by one thread at a time (a generator or the learner); copies share
// the same weights.
#pragma once

#include "common/result.hpp"
#include "policy/model_config.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::policy {

struct group_sampling {
  int group_size = 8;
  double temperature = 1.0;
  double top_p = 1.0;
  int max_new_tokens = 512;
  std::uint64_t seed = 0;
  std::vector<int> stop_ids; // besides the model's eos id
};

struct sampled {
  std::vector<int> tokens;     // completion token ids (the stop/eos token included)
  std::vector<float> logprobs; // behaviour log-prob of each token
  std::string finish;          // "eos", "stop" or "length"
};

struct sft_example {
  std::vector<int> prompt;     // not trained on
  std::vector<int> completion; // trained on (ends with the eos id)
  double weight = 1.0;         // relative sampling weight
};

struct sft_options {
  double minutes = 10;
  int max_steps = 0;           // 0 = until the time budget is spent
  int batch_sequences = 8;
  double lr = 2e-3;
  double min_lr_ratio = 0.1;
  int warmup_steps = 30;
  double weight_decay = 0.01;
  double grad_clip = 1.0;
  std::uint64_t seed = 1;
};

struct sft_progress {
  int step = 0;
  double loss = 0;             // mean over the step's completion tokens
  double lr = 0;
  double tokens_per_second = 0; // all tokens processed (prompt + completion)
  double elapsed_seconds = 0;
  double eta_seconds = 0;
};

struct sft_result {
  int steps = 0;
  double seconds = 0;
  long long tokens = 0;
  long long skipped_examples = 0; // longer than max_seq_len
  double first_loss = 0, final_loss = 0; // means over the first / last 20 steps
};

class policy_model {
public:
  // Fresh weights (HF-style initialisation), deterministic by seed.
  static result<policy_model> create(const model_config& cfg, std::uint64_t seed);
  // A checkpoint directory (config.json, model.safetensors, optimizer state when present).
  static result<policy_model> load(const std::string& dir);
  // config.json, model.safetensors, tokenizer.json (copied), optimizer.safetensors after
  // training, trainer_state.json; atomic (temporary directory renamed into place).
  result<void> save(const std::string& dir, const std::string& tokenizer_json_path,
                    std::int64_t step) const;

  result<std::vector<sampled>> sample(const std::vector<int>& prompt, const group_sampling& p);
  // One sample per prompt, decoded together (left-padded); p.group_size is ignored.
  result<std::vector<sampled>> sample_each(const std::vector<std::vector<int>>& prompts,
                                           const group_sampling& p);

  // AdamW with linear warm-up and cosine decay over the time (or step) budget; loss on
  // completion tokens only. `progress` is called every step from the calling thread.
  result<sft_result> sft(const std::vector<sft_example>& examples, const sft_options& opts,
                         const std::function<void(const sft_progress&)>& progress);

  const model_config& config() const;
  std::int64_t parameter_count() const;

  struct impl;

private:
  std::shared_ptr<impl> impl_;
};

// Sets LibTorch's intra-op threads (0 = the machine's cores); returns the count in use.
int set_torch_threads(int n);

} // namespace leap::policy
