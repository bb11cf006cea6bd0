// hf_files: the Hugging Face checkpoint files besides config.json that say how to talk to a model:
// tokenizer_config.json (special tokens, added_tokens_decoder, chat_template) and
// generation_config.json (bos/eos/pad ids; eos_token_id may be one id or a list). Parsed strictly:
// a key of the wrong type is an error naming the file and the key. Keys leap does not use are
// ignored. LibTorch-free value types and pure functions; any thread.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace leap::policy {

struct hf_tokenizer_config {
  // bos_token / eos_token / pad_token: a string or an AddedToken object {"content": ...}; "" = none.
  std::string bos_token, eos_token, pad_token;
  std::map<std::int64_t, std::string> added_tokens;  // added_tokens_decoder: id -> content
  // chat_template: the string, or of a list of named templates the one named "default"; "" = none.
  std::string chat_template;
  // The id of `token` in added_tokens_decoder, or -1 (also for "").
  std::int64_t id_of(const std::string& token) const;
};

struct hf_generation_config {
  std::vector<std::int64_t> eos_ids;  // eos_token_id: every id of a list, in order
  std::int64_t bos_id = -1;           // bos_token_id (-1: none)
  std::int64_t pad_id = -1;           // pad_token_id (-1: none)
};

// `source` names the file in errors ("<source>: key 'eos_token': ...").
result<hf_tokenizer_config> parse_tokenizer_config(std::string_view json_text, const std::string& source);
result<hf_generation_config> parse_generation_config(std::string_view json_text, const std::string& source);

// <dir>/tokenizer_config.json and <dir>/generation_config.json; a missing file gives the default
// (empty) value, an unreadable or invalid one an error naming it.
result<hf_tokenizer_config> load_tokenizer_config(const std::string& dir);
result<hf_generation_config> load_generation_config(const std::string& dir);

} // namespace leap::policy
