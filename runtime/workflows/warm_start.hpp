// The warm-start workflow (`leap pretrain`, and `leap train` without a warm start): SFT. Builds
// (or reuses) the environment-labelled corpus (runtime/workflows/corpus_labels.hpp), trains the
// BPE tokenizer on it, builds the policy from [policy], fine-tunes it on turn-1 solutions and
// repair dialogues within [sft]'s budget with a progress display, and writes a checkpoint
// directory. With sft.self_repair_steps the last steps also train on the model's own failed
// samples (runtime/workflows/sample_failures.hpp, judged by the environment) answered by a
// correct solution. Main thread; no CAF or LibTorch in this header.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <string>

namespace leap::runtime {

struct pretrain_summary {
  std::string checkpoint_dir;
  std::string corpus_path; // the labelled corpus.jsonl it trained on (under the cache directory)
  long long parameters = 0;
  int vocab_size = 0;
  std::size_t turn1_examples = 0, repair_examples = 0, skipped_examples = 0;
  int steps = 0;
  double first_loss = 0, final_loss = 0;
  double sft_seconds = 0, corpus_seconds = 0;
  double tokens_per_second = 0;
  // Self-repair (sft.self_repair_steps > 0): turn-1 samples judged, how many passed, the repair
  // dialogues made of the failed ones, and the seconds the sampling took.
  long long self_repair_samples = 0, self_repair_passed = 0;
  std::size_t self_repair_examples = 0;
  double self_repair_seconds = 0;
};

// With `show_progress`, the corpus's and the SFT steps' progress goes to stderr.
result<pretrain_summary> pretrain(services& svc, const std::string& out_dir, bool show_progress);

} // namespace leap::runtime
