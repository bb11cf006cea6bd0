#include "env/shape_expr.hpp"

#include <cctype>

namespace leap::env {
namespace {

class parser {
public:
  parser(std::string_view s, const std::map<std::string, long long>& vars) : s_(s), vars_(vars) {}

  result<long long> parse() {
    auto v = expr();
    if (!err_.empty())
      return make_error(err_);
    skip();
    if (pos_ != s_.size())
      return make_error("unexpected '" + std::string(1, s_[pos_]) + "' at column "
                        + std::to_string(pos_ + 1) + " in shape \"" + std::string(s_) + "\"");
    return v;
  }

private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  void fail(std::string msg) {
    if (err_.empty())
      err_ = msg + " in shape \"" + std::string(s_) + "\"";
  }
  long long expr() {
    long long v = term();
    for (;;) {
      skip();
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
        char op = s_[pos_++];
        long long r = term();
        v = op == '+' ? v + r : v - r;
      } else {
        return v;
      }
    }
  }
  long long term() {
    long long v = factor();
    for (;;) {
      skip();
      if (pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/')) {
        char op = s_[pos_++];
        long long r = factor();
        if (op == '*') {
          v *= r;
        } else if (r == 0) {
          fail("division by zero");
          return 0;
        } else {
          v /= r;
        }
      } else {
        return v;
      }
    }
  }
  long long factor() {
    skip();
    if (pos_ >= s_.size()) {
      fail("unexpected end");
      return 0;
    }
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      long long v = expr();
      skip();
      if (pos_ >= s_.size() || s_[pos_] != ')') {
        fail("missing ')' at column " + std::to_string(pos_ + 1));
        return 0;
      }
      ++pos_;
      return v;
    }
    if (c == '-') {
      ++pos_;
      return -factor();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      long long v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
        v = v * 10 + (s_[pos_++] - '0');
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      auto start = pos_;
      while (pos_ < s_.size()
             && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      std::string name(s_.substr(start, pos_ - start));
      auto it = vars_.find(name);
      if (it == vars_.end()) {
        fail("unknown size parameter '" + name + "'");
        return 0;
      }
      return it->second;
    }
    fail("unexpected '" + std::string(1, c) + "' at column " + std::to_string(pos_ + 1));
    return 0;
  }

  std::string_view s_;
  const std::map<std::string, long long>& vars_;
  std::size_t pos_ = 0;
  std::string err_;
};

} // namespace

result<long long> eval_shape(std::string_view expr, const std::map<std::string, long long>& vars) {
  return parser(expr, vars).parse();
}

} // namespace leap::env
