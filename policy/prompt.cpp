// The prompt text. Kept short: a small model pays for every prompt token.
#include "policy/prompt.hpp"

#include "common/strings.hpp"
#include "policy/special_tokens.hpp"

namespace leap::policy {
namespace {

std::string task_text(const task_view& t) {
  std::string s;
  s += "Task: " + t.name + "\n\n";
  s += std::string(trim(t.description)) + "\n\n";
  s += "Write a CUDA C++ source file that defines the entry point with exactly this signature:\n";
  s += std::string(trim(t.signature)) + "\n";
  s += "Pointer arguments are device pointers; launch your own kernels from solution. ";
  if (t.allowed_libraries.empty())
    s += "Do not use libraries (cuBLAS, cuDNN, Thrust, CUB).\n";
  else
    s += "Allowed libraries: " + join(t.allowed_libraries, ", ") + ".\n";
  s += "Answer with one ```cuda code block.\n";
  return s;
}

std::string feedback_text(const std::string& feedback) {
  std::string s = "Your code failed:\n";
  s += std::string(trim(feedback)) + "\n";
  s += "Fix it. Answer with one ```cuda code block.\n";
  return s;
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
    s += feedback_text(history[i].feedback);
  }
  s += special::assistant;
  return s;
}

} // namespace leap::policy
