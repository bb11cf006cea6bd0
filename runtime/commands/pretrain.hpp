// `leap pretrain`: the SFT warm start. Builds (or reuses) the environment-labelled corpus,
// trains the BPE tokenizer on it, builds the policy from [policy], fine-tunes it on turn-1
// solutions and repair dialogues within [sft]'s budget with a progress display, and writes a
// checkpoint directory. Main thread; no CAF or LibTorch in this header.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <string>

namespace leap::runtime {

struct pretrain_summary {
  std::string checkpoint_dir;
  long long parameters = 0;
  int vocab_size = 0;
  std::size_t turn1_examples = 0, repair_examples = 0, skipped_examples = 0;
  int steps = 0;
  double first_loss = 0, final_loss = 0;
  double sft_seconds = 0, corpus_seconds = 0;
  double tokens_per_second = 0;
};

result<pretrain_summary> pretrain(services& svc, const std::string& out_dir, bool show_progress);

int cmd_pretrain(services& svc, const std::string& out_dir, bool json);

} // namespace leap::runtime
