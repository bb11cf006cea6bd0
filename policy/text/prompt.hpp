// The prompt template: the single source of truth for how a task and its earlier attempts are
// shown to the model, shared by SFT data generation, the generator actors and the learner.
//
//   <|bos|><|user|>{task text}<|assistant|>{completion}<|eos|><|user|>{feedback}<|assistant|>...
//
// render_prompt ends with "<|assistant|>"; the completion text starts right after it, so
// encode(prompt) followed by encode(completion) equals encode(prompt + completion) (the special
// token is a split point). The eos token is not part of the completion text: SFT appends the id
// tokenizer::token_id(special::eos) after encode(render_completion(code)); generation stops on it.
// Pure functions; callable from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leap::policy {

// How a conversation is written as model input (`policy.chat_format`):
//   leap    <|bos|><|user|>...<|assistant|>...<|eos|>... (leap's own tokenizer; below)
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n ... <|im_start|>assistant\n (Qwen2/Qwen3)
//   llama3  <|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n{trimmed content}<|eot_id|>
//           ... <|start_header_id|>assistant<|end_header_id|>\n\n (Llama 3)
// chatml and llama3 match the chat_template of Qwen3's and Llama 3's tokenizer_config.json byte for
// byte for system/user/assistant conversations with the generation prompt, with two exceptions,
// both from Qwen3's template and both checked by tests/policy/text/chat_template_test.cpp: Qwen3 writes
// an empty "<think>\n\n</think>\n\n" at the start of an assistant message that comes after the
// last user message, and it cuts an assistant message containing "</think>" down to the text
// after it (leaving out earlier reasoning); chatml writes assistant messages as given (Qwen2's
// template). leap's own prompts always end with a user turn and hold no "</think>", so they are
// unaffected. As both templates, the generation prompt is always appended.
enum class chat_format { leap, chatml, llama3 };
const char* chat_format_name(chat_format f);  // "leap", "chatml", "llama3"
std::optional<chat_format> chat_format_from_name(std::string_view name);
// The format a Hugging Face chat_template writes, recognised by its markers (<|im_start|>,
// <|start_header_id|>); nullopt for any other template.
std::optional<chat_format> chat_format_of_template(std::string_view chat_template);
// What ends an assistant turn: "<|eos|>", "<|im_end|>", "<|eot_id|>" (a generation stop token).
std::string_view end_of_turn(chat_format f);

// What the prompt needs from env::task_spec (the caller copies these fields).
struct task_view {
  std::string name;
  std::string description;
  std::string signature;                       // extern "C" void solution(...)
  std::vector<std::string> allowed_libraries;  // e.g. "cublas"; usually empty
};

// One earlier turn: the code the model wrote (as extracted) and the verdict's feedback text.
struct turn_record {
  std::string code;
  std::string feedback;
};

// Earlier turns shown in a prompt; older ones are dropped (and counted in a note).
inline constexpr std::size_t max_history_turns = 2;

// Turn 1 when `history` is empty; otherwise the conversation so far, ending at the new turn:
// render_chat(prompt_messages(t, history), format).
std::string render_prompt(const task_view& t, const std::vector<turn_record>& history,
                          chat_format format = chat_format::leap);
// A chat conversation (OpenAI-style messages) in the same template: <|bos|>, each user message
// as <|user|>{content}, each assistant message as <|assistant|>{content}<|eos|>, ending with
// <|assistant|> (the answer follows). System messages have no marker of their own: their text
// goes in front of the next user message, separated by a blank line. Consecutive user messages
// are one turn (joined by a blank line). Roles other than system, user and assistant are the
// caller's to refuse.
struct chat_message {
  std::string role;     // "system", "user" or "assistant"
  std::string content;
};
std::string render_chat(const std::vector<chat_message>& messages, chat_format format = chat_format::leap);

// The turns of render_prompt as chat messages: user (task text), then per shown earlier turn
// assistant (render_completion(code)) and user (feedback); render_prompt in chatml / llama3 is
// render_chat of these.
std::vector<chat_message> prompt_messages(const task_view& t, const std::vector<turn_record>& history);

// The assistant's answer for `code`: one ```cuda fenced block, without the eos token.
std::string render_completion(const std::string& code);

} // namespace leap::policy
