// Implementation of the rewriter's lexer (lexer.hpp). Pure, thread-safe.
#include "env/cpu_emu/lexer.hpp"

#include <set>

namespace leap::emu {
namespace {

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

class lexer {
 public:
  explicit lexer(std::string_view s) : s_(s) {}

  std::vector<token> run() {
    std::vector<token> out;
    bool line_start = true;    // only whitespace since the last newline
    bool in_directive = false;
    int directive_tokens = 0;  // tokens of the current directive so far
    bool want_header = false;  // after #include
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
        line_start = true;
        in_directive = false;
        want_header = false;
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || (s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n'))) {
        i_ += s_[i_ + 1] == '\n' ? 2 : 3;
        ++line_;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') {
          if (s_[i_] == '\\' && peek(1) == '\n') { ++line_; ++i_; }
          ++i_;
        }
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        std::size_t end = s_.find("*/", i_ + 2);
        if (end == std::string_view::npos) end = s_.size(); else end += 2;
        count_lines(i_, end);
        i_ = end;
        continue;
      }
      const std::size_t start = i_;
      const int line = line_;
      if (want_header && c == '<') {
        std::size_t end = s_.find_first_of(">\n", i_ + 1);
        if (end == std::string_view::npos || s_[end] == '\n') end = i_; else ++end;
        if (end > i_) {
          i_ = end;
          out.push_back({tk::header_name, start, end - start, line, true});
          want_header = false;
          continue;
        }
      }
      tk kind = tk::punct;
      if (ident_start(c)) {
        while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
        std::string_view id = s_.substr(start, i_ - start);
        if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && literal_prefix(id)) {
          if (id.back() == 'R' && s_[i_] == '"') raw_string(); else quoted(s_[i_]);
          kind = tk::literal;
        } else {
          kind = tk::ident;
        }
      } else if (digit(c) || (c == '.' && digit(peek(1)))) {
        number();
        kind = tk::number;
      } else if (c == '"' || c == '\'') {
        quoted(c);
        kind = tk::literal;
      } else {
        ++i_;
      }
      if (line_start && kind == tk::punct && c == '#') {
        in_directive = true;
        directive_tokens = 0;
      }
      out.push_back({kind, start, i_ - start, line, in_directive, in_directive && directive_tokens == 0});
      if (in_directive) {
        ++directive_tokens;
        if (directive_tokens == 2) {
          std::string_view name = s_.substr(start, i_ - start);
          want_header = name == "include" || name == "include_next";
        } else if (directive_tokens > 2) {
          want_header = false;
        }
      }
      line_start = false;
    }
    return out;
  }

 private:
  char peek(std::size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void count_lines(std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < s_.size(); ++k) line_ += s_[k] == '\n';
  }
  static bool literal_prefix(std::string_view id) {
    static const std::set<std::string_view> prefixes = {"R", "u8", "u", "U", "L", "u8R", "uR", "UR", "LR"};
    return prefixes.count(id) != 0;
  }
  void quoted(char q) {
    ++i_;
    while (i_ < s_.size() && s_[i_] != q && s_[i_] != '\n') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') ++line_;
        ++i_;
      }
      ++i_;
    }
    if (i_ < s_.size() && s_[i_] == q) ++i_;
  }
  void raw_string() {
    std::size_t open = s_.find('(', i_ + 1);
    if (open == std::string_view::npos) { quoted('"'); return; }
    std::string close = ")" + std::string(s_.substr(i_ + 1, open - i_ - 1)) + "\"";
    std::size_t end = s_.find(close, open + 1);
    end = end == std::string_view::npos ? s_.size() : end + close.size();
    count_lines(i_, end);
    i_ = end;
  }
  void number() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (peek(1) == '+' || peek(1) == '-')) {
        i_ += 2;
      } else if (ident_char(c) || c == '.') {
        ++i_;
      } else if (c == '\'' && ident_char(peek(1))) {
        i_ += 2;
      } else {
        break;
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int line_ = 1;
};


}  // namespace

std::vector<token> lex(std::string_view source) { return lexer(source).run(); }

std::size_t token_view::match_forward(std::size_t i) const {
  int depth = 0;
  for (std::size_t j = i; j < toks.size(); ++j) {
    if (punct(j, '(') || punct(j, '[') || punct(j, '{')) ++depth;
    else if (punct(j, ')') || punct(j, ']') || punct(j, '}')) {
      if (--depth == 0) return j;
    }
  }
  return toks.size();
}

std::size_t token_view::match_backward(std::size_t i) const {
  int depth = 0;
  for (std::size_t j = i + 1; j-- > 0;) {
    if (punct(j, ')') || punct(j, ']') || punct(j, '}')) ++depth;
    else if (punct(j, '(') || punct(j, '[') || punct(j, '{')) {
      if (--depth == 0) return j;
    }
  }
  return toks.size();
}

}  // namespace leap::emu
