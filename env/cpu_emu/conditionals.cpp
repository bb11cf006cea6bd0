// Implementation of leap::emu::live_lines: a small #if expression evaluator over the macros the
// source defines and those the emulation's g++ compile predefines. Pure, thread-safe.
#include "env/cpu_emu/conditionals.hpp"

#include <map>
#include <optional>
#include <string_view>

namespace leap::emu {
namespace {

struct macro {
  bool function_like = false;
  std::string value;
};
using macro_table = std::map<std::string, macro, std::less<>>;

// What g++ defines when it compiles solution_emu.cpp (the shim defines LEAP_EMU and
// CUDART_VERSION; __CUDACC__, __NVCC__ and __CUDA_ARCH__ are not defined there).
macro_table predefined() {
  return {{"LEAP_EMU", {false, "1"}},   {"CUDART_VERSION", {false, "13000"}},
          {"__cplusplus", {false, "201703"}}, {"__GNUC__", {false, "12"}},
          {"__x86_64__", {false, "1"}}, {"__linux__", {false, "1"}}};
}

bool id_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool id_char(char c) { return id_start(c) || (c >= '0' && c <= '9'); }

std::vector<std::string> tokenize(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t') { ++i; continue; }
    std::size_t b = i;
    if (id_start(c)) {
      while (i < s.size() && id_char(s[i])) ++i;
    } else if (c >= '0' && c <= '9') {
      while (i < s.size() && (id_char(s[i]) || s[i] == '.' || s[i] == '\'')) ++i;
    } else {
      static const char* two[] = {"&&", "||", "==", "!=", "<=", ">=", "<<", ">>"};
      i += 1;
      for (const char* t : two)
        if (s.substr(b, 2) == t) i = b + 2;
    }
    out.emplace_back(s.substr(b, i - b));
  }
  return out;
}

// Recursive-descent evaluation of a #if expression; nullopt when it cannot be decided.
class evaluator {
 public:
  evaluator(std::vector<std::string> toks, const macro_table& m) : t_(std::move(toks)), m_(m) {}

  std::optional<long long> run() {
    if (!expand(0)) return std::nullopt;
    auto v = cond();
    if (!v || k_ != t_.size()) return std::nullopt;
    return v;
  }

 private:
  // Replaces `defined X` by 0/1 and object-like macros by their value; unknown names become 0
  // (as the preprocessor does); function-like macros make the condition undecidable.
  bool expand(int depth) {
    if (depth > 16) return false;
    std::vector<std::string> out;
    bool again = false;
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const std::string& w = t_[i];
      if (w == "defined") {
        std::size_t j = i + 1;
        bool paren = j < t_.size() && t_[j] == "(";
        if (paren) ++j;
        if (j >= t_.size() || !id_start(t_[j][0])) return false;
        out.push_back(m_.count(t_[j]) ? "1" : "0");
        i = j + (paren ? 1 : 0);
        if (paren && (i >= t_.size() || t_[i] != ")")) return false;
      } else if (id_start(w[0])) {
        auto it = m_.find(w);
        if (it == m_.end()) {
          out.push_back(w == "true" ? "1" : "0");
        } else if (it->second.function_like) {
          return false;
        } else {
          for (auto& x : tokenize(it->second.value)) out.push_back(x);
          again = true;
        }
      } else {
        out.push_back(w);
      }
    }
    t_ = std::move(out);
    return again ? expand(depth + 1) : true;
  }

  bool at(const char* s) const { return k_ < t_.size() && t_[k_] == s; }
  bool eat(const char* s) {
    if (!at(s)) return false;
    ++k_;
    return true;
  }

  std::optional<long long> cond() {
    auto c = binary(0);
    if (!c || !eat("?")) return c;
    auto a = cond();
    if (!a || !eat(":")) return std::nullopt;
    auto b = cond();
    if (!b) return std::nullopt;
    return *c ? a : b;
  }

  static int precedence(const std::string& op) {
    static const std::map<std::string, int, std::less<>> p = {
        {"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5},  {"==", 6}, {"!=", 6}, {"<", 7}, {">", 7},
        {"<=", 7}, {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9},  {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10}};
    auto it = p.find(op);
    return it == p.end() ? 0 : it->second;
  }

  std::optional<long long> binary(int min_prec) {
    auto lhs = unary();
    while (lhs && k_ < t_.size()) {
      const std::string op = t_[k_];
      int p = precedence(op);
      if (p == 0 || p <= min_prec) break;
      ++k_;
      auto rhs = binary(p);
      if (!rhs) return std::nullopt;
      long long a = *lhs, b = *rhs;
      if ((op == "/" || op == "%") && b == 0) return std::nullopt;
      if (op == "||") lhs = (a || b); else if (op == "&&") lhs = (a && b);
      else if (op == "|") lhs = a | b; else if (op == "^") lhs = a ^ b; else if (op == "&") lhs = a & b;
      else if (op == "==") lhs = a == b; else if (op == "!=") lhs = a != b;
      else if (op == "<") lhs = a < b; else if (op == ">") lhs = a > b;
      else if (op == "<=") lhs = a <= b; else if (op == ">=") lhs = a >= b;
      else if (op == "<<") lhs = (b < 0 || b > 62) ? 0 : a << b; else if (op == ">>") lhs = (b < 0 || b > 62) ? 0 : a >> b;
      else if (op == "+") lhs = a + b; else if (op == "-") lhs = a - b;
      else if (op == "*") lhs = a * b; else if (op == "/") lhs = a / b; else lhs = a % b;
    }
    return lhs;
  }

  std::optional<long long> unary() {
    if (eat("!")) { auto v = unary(); return v ? std::optional<long long>(!*v) : std::nullopt; }
    if (eat("-")) { auto v = unary(); return v ? std::optional<long long>(-*v) : std::nullopt; }
    if (eat("+")) return unary();
    if (eat("~")) { auto v = unary(); return v ? std::optional<long long>(~*v) : std::nullopt; }
    if (eat("(")) {
      auto v = cond();
      if (!v || !eat(")")) return std::nullopt;
      return v;
    }
    if (k_ >= t_.size()) return std::nullopt;
    const std::string& w = t_[k_++];
    if (w.empty() || w[0] < '0' || w[0] > '9') return std::nullopt;
    std::string digits;
    for (char c : w)
      if (c != '\'') digits += c;
    while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
      digits.pop_back();
    try {
      std::size_t used = 0;
      long long v = std::stoll(digits, &used, 0);
      if (used != digits.size()) return std::nullopt;
      return v;
    } catch (...) {
      return std::nullopt;
    }
  }

  std::vector<std::string> t_;
  const macro_table& m_;
  std::size_t k_ = 0;
};

struct frame {
  bool parent_live;
  bool live;          // the current branch is compiled
  bool taken;         // some branch of this #if was taken
  bool undecided;     // a condition could not be evaluated: every branch stays live
};

}  // namespace

std::vector<bool> live_lines(const std::vector<directive>& directives, int max_line) {
  std::vector<bool> live(static_cast<std::size_t>(max_line) + 2, true);
  macro_table macros = predefined();
  std::vector<frame> stack;
  auto now_live = [&] { return stack.empty() || stack.back().live; };
  int from = 1;  // first line of the current region
  auto close_region = [&](int until) {  // lines [from, until) take the current state
    const bool l = now_live();
    for (int k = from; k < until && k <= max_line; ++k) live[static_cast<std::size_t>(k)] = l;
  };
  for (const directive& d : directives) {
    auto toks = tokenize(d.text);
    if (toks.empty()) continue;
    const std::string& kw = toks[0];
    const std::string rest = d.text.size() > kw.size() ? d.text.substr(d.text.find(kw) + kw.size()) : "";
    auto eval = [&](std::optional<long long>& v) {
      v = evaluator(tokenize(rest), macros).run();
    };
    const bool conditional = kw == "if" || kw == "ifdef" || kw == "ifndef" || kw == "elif" || kw == "else" ||
                             kw == "endif" || kw == "elifdef" || kw == "elifndef";
    if (!conditional) {
      if (!now_live()) continue;
      if (kw == "define" && toks.size() >= 2 && id_start(toks[1][0])) {
        const std::size_t name_at = d.text.find(toks[1], d.text.find(kw) + kw.size());
        const std::size_t after = name_at + toks[1].size();
        macro m;
        m.function_like = after < d.text.size() && d.text[after] == '(';
        m.value = m.function_like ? "" : d.text.substr(after);
        macros[toks[1]] = m;
      } else if (kw == "undef" && toks.size() >= 2) {
        macros.erase(toks[1]);
      }
      continue;
    }
    close_region(d.line);
    from = d.last_line + 1;
    if (kw == "if" || kw == "ifdef" || kw == "ifndef") {
      frame f{now_live(), false, false, false};
      std::optional<long long> v;
      if (kw == "if") eval(v);
      else if (toks.size() >= 2) v = (macros.count(toks[1]) != 0) == (kw == "ifdef");
      f.undecided = !v;
      f.live = f.parent_live && (f.undecided || *v != 0);
      f.taken = !f.undecided && *v != 0;
      stack.push_back(f);
    } else if (stack.empty()) {
      continue;  // unbalanced: g++ reports it
    } else if (kw == "endif") {
      stack.pop_back();
    } else {
      frame& f = stack.back();
      if (f.undecided) {
        f.live = f.parent_live;
      } else if (kw == "else") {
        f.live = f.parent_live && !f.taken;
        f.taken = true;
      } else {
        std::optional<long long> v;
        if (kw == "elif") eval(v);
        else if (toks.size() >= 2) v = (macros.count(toks[1]) != 0) == (kw == "elifdef");
        if (!v) {  // undecidable from here on: this and later branches stay live
          f.undecided = true;
          f.live = f.parent_live;
        } else {
          f.live = f.parent_live && !f.taken && *v != 0;
          f.taken = f.taken || *v != 0;
        }
      }
    }
  }
  close_region(max_line + 1);
  return live;
}

}  // namespace leap::emu
