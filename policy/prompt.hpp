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
#include <string>
#include <vector>

namespace leap::policy {

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

// Turn 1 when `history` is empty; otherwise the conversation so far, ending at the new turn.
std::string render_prompt(const task_view& t, const std::vector<turn_record>& history);
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
std::string render_chat(const std::vector<chat_message>& messages);

// The assistant's answer for `code`: one ```cuda fenced block, without the eos token.
std::string render_completion(const std::string& code);

} // namespace leap::policy
