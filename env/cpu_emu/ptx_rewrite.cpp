// Implementation of rewrite_inline_asm (ptx_rewrite.hpp). Pure, thread-safe.
#include "env/cpu_emu/ptx_rewrite.hpp"

#include <algorithm>
#include <map>
#include <string_view>

namespace leap::emu {
namespace {

struct operand {
  std::string constraint;
  std::string expr;  // parenthesised C++ expression
};

std::string unescape(std::string_view lit) {  // a "..." literal's contents
  std::string out;
  for (std::size_t k = 1; k + 1 < lit.size(); ++k) {
    if (lit[k] == '\\' && k + 2 < lit.size()) {
      const char c = lit[++k];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += lit[k];
    }
  }
  return out;
}

std::string trim_copy(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Parses `"c"(expr), ...` between tokens [from, to).
bool operands(const token_view& v, std::size_t from, std::size_t to, std::vector<operand>& out) {
  std::size_t j = from;
  while (j < to) {
    if (v.toks[j].kind != tk::literal || !v.punct(j + 1, '(')) return false;
    const std::size_t close = v.match_forward(j + 1);
    if (close > to) return false;
    operand o;
    o.constraint = unescape(v.text(j));
    o.expr = std::string(v.src.substr(v.toks[j + 1].pos, v.toks[close].pos + 1 - v.toks[j + 1].pos));
    out.push_back(o);
    j = close + 1;
    if (j < to && !v.punct(j, ',')) return false;
    ++j;
  }
  return true;
}

const std::map<std::string_view, std::string_view>& ptx_types() {
  static const std::map<std::string_view, std::string_view> t = {
      {"f32", "float"},          {"f64", "double"},         {"b32", "unsigned int"}, {"u32", "unsigned int"},
      {"s32", "int"},            {"b64", "unsigned long long"}, {"u64", "unsigned long long"},
      {"s64", "long long"},      {"b16", "unsigned short"}, {"u16", "unsigned short"}, {"s16", "short"},
      {"u8", "unsigned char"},   {"s8", "signed char"},     {"b8", "unsigned char"}};
  return t;
}

class translator {
 public:
  explicit translator(const std::vector<operand>& ops) : ops_(ops) {}

  // C++ for one instruction, or false with `bad` set.
  bool instruction(const std::string& ins, std::string& out, std::string& bad) {
    const std::size_t sp = ins.find_first_of(" \t");
    const std::string op = ins.substr(0, sp);
    const std::string args = sp == std::string::npos ? "" : trim_copy(ins.substr(sp));
    bad = op;
    std::vector<std::string> a = split_args(args);
    if (op == "cp.async.commit_group" && a.empty()) {
      out += "::leap_emu::ptx::cp_async_commit(); ";
      return true;
    }
    if (op == "cp.async.wait_all" && a.empty()) {
      out += "::leap_emu::ptx::cp_async_wait_all(); ";
      return true;
    }
    if (op == "cp.async.wait_group" && a.size() == 1) {
      std::string n;
      if (!value(a[0], n)) return false;
      out += "::leap_emu::ptx::cp_async_wait_group(" + n + "); ";
      return true;
    }
    if (starts(op, "cp.async.ca.shared") || starts(op, "cp.async.cg.shared")) {
      // cp.async.{ca,cg}.shared{::cta}.global{.L2::64B|128B|256B} [dst], [src], cp-size{, src-size}
      std::string rest = op.substr(std::string("cp.async.ca.shared").size());
      if (starts(rest, "::cta")) rest = rest.substr(5);
      if (!starts(rest, ".global")) return false;
      rest = rest.substr(7);
      if (!rest.empty() && rest != ".L2::64B" && rest != ".L2::128B" && rest != ".L2::256B") return false;
      if (a.size() != 3 && a.size() != 4) return false;
      std::string dst, src, n, src_n;
      if (!address(a[0], dst, true) || !address(a[1], src) || !value(a[2], n)) return false;
      if (a.size() == 4 && !value(a[3], src_n)) return false;
      out += "::leap_emu::ptx::cp_async(" + dst + ", ::leap_emu::ptx::global(" + src + "), " + n + ", " +
             (src_n.empty() ? n : src_n) + (starts(op, "cp.async.cg") ? ", true" : "") + "); ";
      return true;
    }
    if (starts(op, "ld.global.")) return load(op, a, out);
    if ((op == "mov.u32" || op == "mov.b32" || op == "mov.s32") && a.size() == 2 && a[1] == "%laneid") {
      std::string dst;
      if (!value(a[0], dst, true)) return false;
      out += "::leap_emu::ptx::set(" + dst + ", ::leap_emu::detail::lane_id()); ";
      return true;
    }
    if ((op == "mov.u32" || op == "mov.b32") && a.size() == 2 && starts(a[1], "%lanemask_")) {
      const std::string kind = a[1].substr(10);
      if (kind != "eq" && kind != "le" && kind != "lt" && kind != "ge" && kind != "gt") return false;
      std::string dst;
      if (!value(a[0], dst, true)) return false;
      out += "::leap_emu::ptx::set(" + dst + ", ::leap_emu::ptx::lanemask_" + kind + "()); ";
      return true;
    }
    return false;
  }

 private:
  static bool starts(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

  static std::vector<std::string> split_args(const std::string& s) {
    std::vector<std::string> out;
    int brace = 0;
    std::string cur;
    for (char c : s) {
      if (c == '{') ++brace;
      if (c == '}') --brace;
      if (c == ',' && brace == 0) {
        out.push_back(trim_copy(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!trim_copy(cur).empty()) out.push_back(trim_copy(cur));
    return out;
  }

  // %N -> the operand's expression (an immediate stays as it is); `output` requires an output
  // operand.
  bool value(const std::string& s, std::string& out, bool output = false) {
    if (!output && !s.empty() && s.find_first_not_of("0123456789") == std::string::npos) {  // an immediate
      out = s;
      return true;
    }
    if (s.size() < 2 || s.size() > 4 || s[0] != '%' || s.find_first_not_of("0123456789", 1) != std::string::npos)
      return false;
    const std::size_t k = std::stoul(s.substr(1));
    if (k >= ops_.size()) return false;
    if (output && ops_[k].constraint.find('=') == std::string::npos && ops_[k].constraint.find('+') == std::string::npos)
      return false;
    out = ops_[k].expr;
    return true;
  }

  // [%N] or [%N+imm] -> an address expression (a generic/global pointer, or with `shared` the
  // 32-bit shared-window address as an integer)
  bool address(const std::string& s, std::string& out, bool shared = false) {
    if (s.size() < 4 || s.front() != '[' || s.back() != ']') return false;
    std::string in = trim_copy(s.substr(1, s.size() - 2));
    std::string off;
    const auto plus = in.find('+');
    if (plus != std::string::npos) {
      off = trim_copy(in.substr(plus + 1));
      in = trim_copy(in.substr(0, plus));
      if (off.empty() || off.find_first_not_of("0123456789") != std::string::npos) return false;
    }
    std::string base;
    if (!value(in, base)) return false;
    out = std::string(shared ? "::leap_emu::ptx::shared_addr(" : "::leap_emu::ptx::addr(") + base + ")" +
          (off.empty() ? "" : " + " + off);
    return true;
  }

  bool load(const std::string& op, const std::vector<std::string>& a, std::string& out) {
    // ld.global[.nc][.ca|.cg|.cs|.lu|.cv][.L1::no_allocate][.L2::64B|128B|256B][.v2|.v4].type
    std::vector<std::string> parts;
    for (std::size_t b = 0;;) {
      const auto e = op.find('.', b);
      parts.push_back(op.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 1;
    }
    if (parts.size() < 3 || a.size() != 2) return false;
    int width = 1;
    std::string type;
    for (std::size_t k = 2; k < parts.size(); ++k) {
      const std::string& p = parts[k];
      if (p == "nc" || p == "ca" || p == "cg" || p == "cs" || p == "lu" || p == "cv" || p == "L1::no_allocate" ||
          p == "L2::64B" || p == "L2::128B" || p == "L2::256B")
        continue;
      if (p == "v2" || p == "v4") { width = p[1] - '0'; continue; }
      auto t = ptx_types().find(p);
      if (t == ptx_types().end() || k + 1 != parts.size()) return false;
      type = std::string(t->second);
    }
    if (type.empty()) return false;
    std::vector<std::string> dsts;
    if (width == 1) {
      dsts.push_back(a[0]);
    } else {
      if (a[0].size() < 2 || a[0].front() != '{' || a[0].back() != '}') return false;
      dsts = split_args(a[0].substr(1, a[0].size() - 2));
      if (static_cast<int>(dsts.size()) != width) return false;
    }
    std::string src;
    if (!address(a[1], src)) return false;
    out += "{ const char* leap_emu_src = ::leap_emu::ptx::global(" + src + "); ";
    for (int k = 0; k < width; ++k) {
      std::string d;
      if (!value(dsts[static_cast<std::size_t>(k)], d, true)) return false;
      out += "::leap_emu::ptx::set(" + d + ", ::leap_emu::ptx::load<" + type + ">(leap_emu_src + " +
             std::to_string(k) + " * sizeof(" + type + "))); ";
    }
    out += "} ";
    return true;
  }

  const std::vector<operand>& ops_;
};

}  // namespace

asm_rewrite rewrite_inline_asm(const token_view& v, std::size_t i, std::vector<edit>& edits) {
  asm_rewrite r;
  r.last = i;
  std::size_t j = i + 1;
  while (v.is(j, "volatile") || v.is(j, "__volatile__") || v.is(j, "inline")) ++j;
  if (!v.punct(j, '(')) {
    r.unsupported = "asm without a parenthesised template";
    return r;
  }
  const std::size_t close = v.match_forward(j);
  if (close >= v.toks.size()) {
    r.unsupported = "unbalanced asm statement";
    return r;
  }
  r.last = close;
  // Template literals, then up to three ':'-separated sections.
  std::string tmpl;
  std::size_t k = j + 1;
  while (k < close && v.toks[k].kind == tk::literal) tmpl += unescape(v.text(k++));
  std::vector<std::size_t> colons;
  int depth = 0;
  for (std::size_t c = k; c < close; ++c) {
    if (v.punct(c, '(') || v.punct(c, '[')) ++depth;
    else if (v.punct(c, ')') || v.punct(c, ']')) --depth;
    else if (depth == 0 && v.punct(c, ':')) {
      if (v.punct(c + 1, ':') && v.toks[c].pos + 1 == v.toks[c + 1].pos) {  // '::' = two empty sections
        colons.push_back(c);
        colons.push_back(++c);
      } else {
        colons.push_back(c);
      }
    }
  }
  if (k < close && (colons.empty() || colons[0] != k)) {
    r.unsupported = "an asm template that is not a string literal (a macro?)";
    return r;
  }
  colons.push_back(close);
  std::vector<operand> outs, ins;
  if (colons.size() >= 2 && !operands(v, colons[0] + 1, colons[1], outs)) {
    r.unsupported = "asm output operands the emulation cannot parse (named operands?)";
    return r;
  }
  if (colons.size() >= 3 && !operands(v, colons[1] + 1, colons[2], ins)) {
    r.unsupported = "asm input operands the emulation cannot parse";
    return r;
  }
  std::vector<operand> all = outs;
  all.insert(all.end(), ins.begin(), ins.end());
  std::string body;
  translator tr(all);
  std::string text = tmpl;
  // %% stands for a literal % in a template with operands.
  for (std::size_t p = 0; (p = text.find("%%", p)) != std::string::npos;) text.replace(p, 2, "%");
  std::string ins_text;
  for (std::size_t p = 0; p <= text.size(); ++p) {
    if (p == text.size() || text[p] == ';' || text[p] == '\n') {
      std::string one = trim_copy(ins_text);
      ins_text.clear();
      if (one.empty() || one.compare(0, 2, "//") == 0) continue;
      std::string bad;
      if (!tr.instruction(one, body, bad)) {
        r.unsupported = "'" + one + "'";
        return r;
      }
    } else {
      ins_text += text[p];
    }
  }
  std::string out = "do { __asm__ __volatile__(\"\" ::: \"memory\"); " + body + "} while (0)";
  const std::string_view original = v.src.substr(v.toks[i].pos, v.toks[close].pos + 1 - v.toks[i].pos);
  const bool directive = v.toks[i].in_directive;
  for (auto n = std::count(original.begin(), original.end(), '\n'); n > 0; --n) out += directive ? "\\\n" : "\n";
  edits.push_back({v.toks[i].pos, v.toks[close].pos + 1, out});
  r.ok = true;
  return r;
}

}  // namespace leap::emu
