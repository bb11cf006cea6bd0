// The prompt text. Kept short: a small model pays for every prompt token.
#include "policy/prompt.hpp"

#include "common/strings.hpp"
#include "policy/special_tokens.hpp"

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
  s += "Fix it. Answer with one ```cuda code block.\n";
  return s + signature_text(t);
}

} // namespace

std::string render_completion(const std::string& code) {
  std::string body(trim(code));
  return "```cuda\n" + body + "\n```";
}

std::string render_prompt(const task_view& t, const std::vector<turn_record>& history) {
  std::size_t first = history.size() > max_history_turns ? history.size() - max_history_turns : 0;
  std::string s;
  s += special::bos;
  s += special::user;
  s += task_text(t);
  if (first > 0)
    s += "(" + std::to_string(first) + " earlier attempt" + (first == 1 ? "" : "s")
         + " not shown.)\n";
  for (std::size_t i = first; i < history.size(); ++i) {
    s += special::assistant;
    s += render_completion(history[i].code);
    s += special::eos;
    s += special::user;
    s += feedback_text(t, history[i].feedback);
  }
  s += special::assistant;
  return s;
}

std::string render_chat(const std::vector<chat_message>& messages) {
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
