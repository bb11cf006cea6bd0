// Shared helpers of the template producers: styles, substitution, signature text.
#include "policy/corpus/families.hpp"

namespace leap::corpus::detail {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

style make_style(const env::task_spec& t, const std::string& strategy, rng& r) {
  // One canonical style for every variant. Random names (four kernel names, four index names,
  // literal or named block size, helper or inline op) were measured to hurt the quickstart model:
  // a few-million-parameter decoder trained for minutes learns the shared template but cannot
  // copy a name chosen earlier in the same completion (e.g. the kernel's name at its launch), so
  // its samples mixed styles and did not compile (0/176 turn-1 samples). With one style the only
  // task-specific tokens left are the operation and the parameter lists. The draw is kept so
  // block sizes and bug sites stay as the seed picked them before.
  (void)strategy;
  (void)r.below(4);
  style st;
  st.id = 0;
  st.kernel = t.name + "_kernel";
  st.idx = "i";
  st.named_block = true;
  st.helper = true;
  return st;
}

std::string fill(std::string text, const subs_t& subs) {
  for (auto& [from, to] : subs) {
    for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
      text.replace(p, from.size(), to);
  }
  return text;
}

std::string param_list(const env::task_spec& t) {
  std::string out;
  for (auto& a : t.args)
    out += (out.empty() ? "" : ", ") + a.p.c_type() + " " + a.p.name;
  return out;
}

std::string arg_list(const env::task_spec& t) {
  std::string out;
  for (auto& a : t.args)
    out += (out.empty() ? "" : ", ") + a.p.name;
  return out;
}

std::string block_expr(const style& st, int block) {
  return st.named_block ? std::string("k_block") : std::to_string(block);
}

std::string prologue(const env::task_spec& /*t*/, const style& st, const std::string& /*what*/, int block) {
  std::string out = "#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n\n";
  if (st.named_block && block > 0)
    out += "constexpr int k_block = " + std::to_string(block) + ";\n\n";
  return out;
}

std::string host_fn(const env::task_spec& t, const std::string& body) {
  return "extern \"C\" void solution(" + param_list(t) + ") {\n" + body + "}\n";
}

std::string kernel_open(const env::task_spec& t, const style& st) {
  return "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
}

} // namespace leap::corpus::detail
