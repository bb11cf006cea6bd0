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

namespace {
std::string camel(const std::string& snake) {
  std::string out;
  bool up = false;
  for (char c : snake) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}
} // namespace

style make_style(const env::task_spec& t, const std::string& strategy, rng& r) {
  style st;
  st.id = static_cast<int>(r.below(4));
  switch (st.id) {
  case 0: st.kernel = t.name + "_kernel"; break;
  case 1: st.kernel = t.name + "_" + strategy; break;
  case 2: st.kernel = camel(t.name) + "Kernel"; break;
  default: st.kernel = "k_" + strategy; break;
  }
  static const std::vector<std::string> idx{"i", "idx", "gid", "tid"};
  st.idx = idx[static_cast<std::size_t>(st.id)];
  st.named_block = st.id == 0 || st.id == 3;
  st.comments = st.id != 2;
  st.helper = st.id == 1 || st.id == 3;
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

std::string prologue(const env::task_spec& t, const style& st, const std::string& what, int block) {
  std::string out;
  if (st.comments)
    out += "// " + t.name + ": " + what + "\n";
  out += "#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n\n";
  if (st.named_block && block > 0)
    out += "constexpr int k_block = " + std::to_string(block) + ";\n\n";
  return out;
}

} // namespace leap::corpus::detail
