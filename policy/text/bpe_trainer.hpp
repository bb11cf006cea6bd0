// bpe_trainer: learns byte-level BPE merges from a corpus and builds a leap::policy::tokenizer
// (bytes 0..255, merged tokens, then the special tokens). Deterministic: the same corpus and
// options give the same merges (ties broken by lower pair ids). Incremental pair counts, so a
// few MB train in seconds. Single-threaded; a trainer holds only its options, so separate calls
// may run on separate threads.
#pragma once

#include "common/result.hpp"
#include "policy/text/pretokenize.hpp"
#include "policy/text/special_tokens.hpp"
#include "policy/text/tokenizer.hpp"

#include <string>
#include <vector>

namespace leap::policy {

struct bpe_trainer_options {
  int vocab_size = 4096;  // total, including the 256 bytes and the special tokens
  int min_frequency = 2;  // a pair seen fewer times is never merged (training may stop early)
  std::vector<std::string> special_tokens = special::all();
  split_pattern pattern = split_pattern::llama3;
};

class bpe_trainer {
public:
  explicit bpe_trainer(bpe_trainer_options o = {}) : opt_(std::move(o)) {}

  // Merges in rank order. Special-token text in the corpus is cut out before counting.
  result<std::vector<byte_merge>> train_merges(const std::vector<std::string>& corpus) const;
  result<tokenizer> train(const std::vector<std::string>& corpus) const;

private:
  bpe_trainer_options opt_;
};

} // namespace leap::policy
