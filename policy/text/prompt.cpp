// The prompt text. Kept short: a small model pays for every prompt token.
#include "policy/text/prompt.hpp"

#include "common/strings.hpp"
#include "policy/text/special_tokens.hpp"

namespace leap::policy {
namespace {

// The task name and the exact signature come last, right before the answer: a small model copies
// names (the kernel is named after the task, the parameter lists are the signature's) far more
// reliably from nearby context than from the top of a long prompt.
std::string signature_text(const task_view& t) {
  return "Task: " + t.name + "\nSignature:\n" + std::string(trim(t.signature)) + "\n";
}

std::string task_text(const task_view& t) {
  std::string s;
  s += std::string(trim(t.description)) + "\n\n";
  s += "Write a CUDA C++ file defining exactly the signature below; launch your kernels from it. ";
  if (t.allowed_libraries.empty())
    s += "Do not use libraries (cuBLAS, cuDNN, Thrust, CUB).\n";
  else
    s += "Allowed libraries: " + join(t.allowed_libraries, ", ") + ".\n";
  s += "Answer with one ```cuda code block.\n";
  return s + signature_text(t);
}

std::string feedback_text(const task_view& t, const std::string& feedback) {
  std::string s = "Your code failed:\n";
  s += std::string(trim(feedback)) + "\n";
  s += "Fix it. Answer with one ```cuda code block, or with ```edit SEARCH/REPLACE blocks of your code.\n";
  return s + signature_text(t);
}

} // namespace

std::string render_completion(const std::string& code) {
  std::string body(trim(code));
  return "```cuda\n" + body + "\n```";
}

namespace {

// ChatML (Qwen): every message as is.
std::string render_chatml(const std::vector<chat_message>& messages) {
  std::string s;
  for (const auto& m : messages) s += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  return s + "<|im_start|>assistant\n";
}

// The length of the whitespace code point at the start (or, with `back`, the end) of `s`, or 0.
// Whitespace as JavaScript's String.prototype.trim (the reference's Jinja trim): U+0009..U+000D,
// U+0020, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF.
// (Python's str.strip, which transformers' Jinja uses, also strips U+001C..U+001F and U+0085 and
// keeps U+FEFF; the two references differ there.)
std::size_t whitespace_len(std::string_view s, bool back) {
  static const char* const multi[] = {"\xC2\xA0", "\xE1\x9A\x80", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF",
                                      "\xE2\x81\x9F", "\xE3\x80\x80", "\xEF\xBB\xBF"};
  if (s.empty()) return 0;
  const char c = back ? s.back() : s.front();
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  auto has = [&](std::string_view w) {
    return s.size() >= w.size() && (back ? s.substr(s.size() - w.size()) : s.substr(0, w.size())) == w;
  };
  for (const char* w : multi)
    if (has(w)) return std::char_traits<char>::length(w);
  for (unsigned char last = 0x80; last <= 0x8A; ++last) {  // U+2000..U+200A: E2 80 80..8A
    const char w[] = {'\xE2', '\x80', static_cast<char>(last), 0};
    if (has(w)) return 3;
  }
  return 0;
}

std::string_view jinja_trim(std::string_view s) {
  while (auto n = whitespace_len(s, false)) s.remove_prefix(n);
  while (auto n = whitespace_len(s, true)) s.remove_suffix(n);
  return s;
}

// Llama 3: the template trims each message (Jinja's trim).
std::string render_llama3(const std::vector<chat_message>& messages) {
  std::string s = "<|begin_of_text|>";
  for (const auto& m : messages)
    s += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + std::string(jinja_trim(m.content)) + "<|eot_id|>";
  return s + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

} // namespace

const char* chat_format_name(chat_format f) {
  switch (f) {
    case chat_format::leap: return "leap";
    case chat_format::chatml: return "chatml";
    case chat_format::llama3: return "llama3";
  }
  return "leap";
}

std::optional<chat_format> chat_format_from_name(std::string_view name) {
  for (auto f : {chat_format::leap, chat_format::chatml, chat_format::llama3})
    if (name == chat_format_name(f)) return f;
  return std::nullopt;
}

std::optional<chat_format> chat_format_of_template(std::string_view tmpl) {
  if (tmpl.find("<|im_start|>") != std::string_view::npos) return chat_format::chatml;
  if (tmpl.find("<|start_header_id|>") != std::string_view::npos) return chat_format::llama3;
  if (tmpl.find(special::assistant) != std::string_view::npos) return chat_format::leap;
  return std::nullopt;
}

std::string_view end_of_turn(chat_format f) {
  switch (f) {
    case chat_format::chatml: return "<|im_end|>";
    case chat_format::llama3: return "<|eot_id|>";
    case chat_format::leap: break;
  }
  return special::eos;
}

std::vector<chat_message> prompt_messages(const task_view& t, const std::vector<turn_record>& history) {
  // Older turns than the last max_history_turns are left out, and counted in a note.
  const std::size_t first = history.size() > max_history_turns ? history.size() - max_history_turns : 0;
  std::string note;
  if (first > 0)
    note = "(" + std::to_string(first) + " earlier attempt" + (first == 1 ? "" : "s") + " not shown.)\n";
  std::vector<chat_message> msgs{{"user", task_text(t) + note}};
  for (std::size_t i = first; i < history.size(); ++i) {
    msgs.push_back({"assistant", render_completion(history[i].code)});
    msgs.push_back({"user", feedback_text(t, history[i].feedback)});
  }
  return msgs;
}

std::string render_prompt(const task_view& t, const std::vector<turn_record>& history, chat_format format) {
  return render_chat(prompt_messages(t, history), format);
}

std::string render_chat(const std::vector<chat_message>& messages, chat_format format) {
  if (format == chat_format::chatml) return render_chatml(messages);
  if (format == chat_format::llama3) return render_llama3(messages);
  std::string s(special::bos);
  std::string pending;  // system or user text not yet written
  bool have_user = false;
  auto flush_user = [&] {
    if (!have_user && pending.empty())
      return;
    s += special::user;
    s += pending;
    pending.clear();
    have_user = false;
  };
  for (const auto& m : messages) {
    if (m.role == "assistant") {
      flush_user();
      s += special::assistant;
      s += m.content;
      s += special::eos;
    } else {
      if (!pending.empty())
        pending += "\n\n";
      pending += m.content;
      have_user = have_user || m.role == "user";
    }
  }
  if (!pending.empty() || have_user)
    flush_user();
  s += special::assistant;
  return s;
}

} // namespace leap::policy
