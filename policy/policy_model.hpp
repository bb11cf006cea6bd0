// The policy as the rest of leap sees it: a Llama-style decoder behind a LibTorch-free facade
// (create/load/save a checkpoint, sample a GRPO group with behaviour log-probs, supervised
// fine-tuning on prompt/completion pairs). Keeps torch headers out of runtime/ and actors/.
// One policy_model is used by one thread at a time (a generator or the learner); copies share
// the same weights.
#pragma once

#include "common/result.hpp"
#include "policy/model/aggregation.hpp"
#include "policy/model/model_config.hpp"

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
  // Stop strings (need `decode`) and per-row seeds: as sampling_params (policy/model/sampler.hpp).
  std::vector<std::string> stop_strings;
  std::function<std::string(const std::vector<int>&)> decode;
  std::vector<std::uint64_t> row_seeds;
  int top_logprobs = 0;   // as sampling_params
  std::function<void(std::size_t row, int token, float logprob,
                     const std::vector<std::pair<int, float>>& top)>
    on_token;             // as sampling_params
};

struct sampled {
  std::vector<int> tokens;     // completion token ids (the stop/eos token included)
  std::vector<float> logprobs; // behaviour log-prob of each token
  std::string finish;          // "eos", "stop" or "length"
  std::vector<std::vector<std::pair<int, float>>> top_logprobs; // per token, when asked
};

struct sft_example {
  std::vector<int> prompt;     // not trained on
  std::vector<int> completion; // trained on (ends with the eos id)
  double weight = 1.0;         // relative sampling weight
};

struct sft_options {
  double minutes = 10;
  int max_steps = 0;           // 0 = until the time budget is spent
  // One learning-rate schedule over several calls (max_steps > 0): this call runs steps
  // first_step .. first_step + max_steps - 1 of a warm-up + cosine schedule of schedule_steps
  // (0 = max_steps). The AdamW moments carry over between calls on the same model.
  int first_step = 0;
  int schedule_steps = 0;
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

// One sequence of a GRPO batch: a turn's prompt and the completion sampled for it.
struct rl_sequence {
  std::vector<int> prompt;
  std::vector<int> completion;      // the sampled tokens (eos/stop included)
  std::vector<float> old_logprobs;  // behaviour log-probs, one per completion token
  double advantage = 0;             // of every completion token of this sequence
};

struct rl_options {
  double lr = 2e-4;
  double weight_decay = 0.0;
  double grad_clip = 1.0;
  double clip_low = 0.2;
  double clip_high = 0.28;
  double kl_coef = 0.0;             // needs set_reference()
  loss_aggregation aggregation = loss_aggregation::token_mean;
  double dr_grpo_norm_tokens = 512; // Dr.GRPO's constant normaliser (the generation budget)
  double temperature = 1.0;         // the sampling temperature of the behaviour log-probs
  int micro_batch = 8;              // sequences per forward/backward; gradients accumulate
  int mini_batches = 1;             // optimizer steps per pass: sequences dealt round robin
  int epochs = 1;                   // passes over the batch (PPO epochs)
};

struct rl_stats {
  double loss = 0;           // total loss of the step (policy gradient + KL)
  double pg_loss = 0;
  double kl = 0;             // mean k3 KL over real tokens (0 without a reference)
  double clip_fraction = 0;
  double ratio_mean = 0;
  double grad_norm = 0;      // before clipping
  long long tokens = 0;      // completion tokens trained on
  int sequences = 0;
};

class policy_model {
public:
  // Fresh weights (HF-style initialisation), deterministic by seed.
  static result<policy_model> create(const model_config& cfg, std::uint64_t seed);
  // A checkpoint directory (config.json, model.safetensors, optimizer state when present).
  static result<policy_model> load(const std::string& dir);
  // A warm start: config.json, model.safetensors, tokenizer.json (copied), trainer_state.json,
  // without the optimizer's moments (a third of the size: nothing resumes an SFT, and begin_rl
  // starts a fresh AdamW); atomic (temporary directory renamed into place). The learner's
  // checkpoints keep the moments (save_with_state).
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

  // --- reinforcement learning (the learner and the generators) ---
  // A fresh AdamW for the RL phase (the SFT optimizer, if any, is dropped).
  void begin_rl(const rl_options& opts);
  // Restores the AdamW moments saved in a checkpoint directory (after begin_rl).
  result<void> restore_optimizer(const std::string& checkpoint_dir);
  // The frozen policy of the KL penalty, loaded from a checkpoint directory.
  result<void> set_reference(const std::string& checkpoint_dir);
  // One learner step of the GRPO loss over `batch`: `epochs` passes, each dealing the
  // sequences round robin into `mini_batches` mini batches of one AdamW step apiece (gradients
  // accumulated in micro batches). With the defaults (1, 1) it is one on-policy step over all
  // sequences. Stats are token-weighted means over the optimizer steps (clip_fraction and
  // ratio_mean show how far the later steps moved off the behaviour policy); grad_norm is the
  // mean pre-clip norm. Sequences with an empty completion are skipped.
  result<rl_stats> grpo_step(const std::vector<rl_sequence>& batch, const rl_options& opts);
  // The weights as a safetensors image (float32, HF names), and back: how the learner publishes
  // a policy version to the generators (in a message, so it also crosses machines).
  result<std::string> export_weights() const;
  result<void> import_weights(const std::string& safetensors_image);
  // Like save(), with the trainer's free-form state (JSON text) in trainer_state.json and the
  // tokenizer given as its text (tokenizer.json's content), not a path.
  result<void> save_with_state(const std::string& dir, const std::string& tokenizer_json,
                               std::int64_t step, std::int64_t policy_version,
                               const std::string& extra_json) const;

  const model_config& config() const;
  std::int64_t parameter_count() const;

  struct impl;

private:
  std::shared_ptr<impl> impl_;
};

// Sets LibTorch's intra-op threads (0 = the machine's cores); returns the count in use.
int set_torch_threads(int n);

} // namespace leap::policy
