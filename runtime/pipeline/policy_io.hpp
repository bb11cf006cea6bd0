// Glue between the task suite, the corpus and the policy's text side, shared by `leap pretrain`,
// `leap eval` and (later) the generator actors: task -> prompt view, corpus records -> SFT texts.
// No CAF, no LibTorch. Main thread.
#pragma once

#include "common/result.hpp"
#include "env/task.hpp"
#include "runtime/config/config.hpp"
#include "policy/text/prompt.hpp"
#include "policy/text/tokenizer.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leap::runtime {

policy::task_view view_of(const env::task_spec& t);

// The prompt of a task's next turn after the earlier turns' code and feedback (parallel lists),
// in `format` (policy::render_prompt): what the generators and `leap serve` give the model.
std::string task_prompt(const env::task_spec& t, const std::vector<std::string>& codes,
                        const std::vector<std::string>& feedbacks, policy::chat_format format);

// The format a policy.chat_format choice names; nullopt for auto (it depends on a checkpoint).
std::optional<policy::chat_format> named_chat_format(config::chat_format_choice choice);

// policy.chat_format for the checkpoint in `dir`: the configured format, or with auto the one its
// tokenizer_config.json chat_template writes (leap without a tokenizer_config.json or template;
// an error for a template of another format). chatml and llama3 are checked against `tok`: each
// marker token of the format must be one token of it, else an error naming the token.
result<policy::chat_format> chat_format_for(config::chat_format_choice choice, const std::string& dir,
                                            const policy::tokenizer& tok);

// One supervised pair in text form, before tokenization.
struct sft_text {
  std::string task;
  std::string prompt;      // render_prompt(...), ends with the assistant marker
  std::string completion;  // render_completion(code), or a repair's render_edit; eos appended later
  bool repair = false;
  int alternative = 0;     // rank of the target code among the task's correct solutions (0 = first)
};

// Reads corpus.jsonl: every target solution becomes a turn-1 pair, every repair dialogue a
// turn-2 pair (buggy code + its real feedback -> the fixed code, whole or as edits of the buggy
// code: sft.repair_format).
result<std::vector<sft_text>> load_sft_texts(
  const std::string& corpus_jsonl, const std::map<std::string, env::task_spec>& tasks,
  config::repair_format repairs = config::repair_format::full);

// A failed turn-1 attempt as the attempt's next turn would show it to the model.
struct failed_turn {
  std::string task;
  std::string code;      // the code extracted from the completion ("" when it had none)
  std::string feedback;  // the verdict's feedback
};

// Self-repair dialogues (sft.self_repair_steps): each failed attempt's code and real feedback, in
// the prompt its next turn shows (leap format), answered by its task's first correct solution
// (the completion of the task's alternative-0 turn-1 pair in `texts`). Failures of tasks that
// have no such pair are left out. In the order of `failures`; repair = true.
std::vector<sft_text> self_repair_texts(const std::vector<failed_turn>& failures,
                                        const std::vector<sft_text>& texts,
                                        const std::map<std::string, env::task_spec>& tasks);

// Encodes prompt + completion + eos.
struct encoded_pair {
  std::vector<int> prompt, completion;
};
encoded_pair encode_pair(const policy::tokenizer& tok, const sft_text& t);

} // namespace leap::runtime
