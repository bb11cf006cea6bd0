#include "env/signature.hpp"

#include "common/strings.hpp"

#include <cctype>
#include <sstream>

namespace leap::env {

std::string param::c_type() const {
  std::string t = is_const ? "const " : "";
  t += kind == scalar_kind::f32 ? "float" : "int";
  if (is_pointer)
    t += "*";
  return t;
}

namespace {

std::vector<std::string> tokenize(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      auto b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
        ++i;
      out.emplace_back(s.substr(b, i - b));
    } else {
      out.emplace_back(1, c);
      ++i;
    }
  }
  return out;
}

} // namespace

result<std::vector<param>> parse_signature(std::string_view sig) {
  auto fail = [&](const std::string& why) {
    return make_error("signature '" + std::string(sig) + "': " + why);
  };
  auto open = sig.find('(');
  auto close = sig.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return fail("expected 'extern \"C\" void solution(...)'");
  auto head = tokenize(sig.substr(0, open));
  // Accept: extern "C" void solution   (the "C" tokenizes as '"', C, '"').
  std::string joined = join(head, " ");
  if (joined != "extern \" C \" void solution")
    return fail("expected 'extern \"C\" void solution(' before the parameters");
  if (!trim(sig.substr(close + 1)).empty() && trim(sig.substr(close + 1)) != ";")
    return fail("unexpected text after ')'");
  std::vector<param> params;
  auto body = sig.substr(open + 1, close - open - 1);
  if (trim(body).empty() || trim(body) == "void")
    return params;
  std::size_t start = 0;
  while (start <= body.size()) {
    auto comma = body.find(',', start);
    auto piece = body.substr(start, comma == std::string_view::npos ? body.size() - start
                                                                    : comma - start);
    auto toks = tokenize(piece);
    param p;
    bool have_base = false;
    for (std::size_t i = 0; i + 1 < toks.size(); ++i) {
      const auto& t = toks[i];
      if (t == "const")
        p.is_const = true;
      else if (t == "float" && !have_base)
        p.kind = scalar_kind::f32, have_base = true;
      else if (t == "int" && !have_base)
        p.kind = scalar_kind::i32, have_base = true;
      else if (t == "*" && !p.is_pointer)
        p.is_pointer = true;
      else if (t == "__restrict__" || t == "__restrict")
        continue;
      else
        return fail("unsupported type token '" + t + "' in parameter '" + std::string(trim(piece))
                    + "' (supported: const float*, float*, const int*, int*, int)");
    }
    if (toks.empty() || !have_base)
      return fail("parameter '" + std::string(trim(piece)) + "' has no type");
    const auto& name = toks.back();
    if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
      return fail("parameter '" + std::string(trim(piece)) + "' has no name");
    if (!p.is_pointer && (p.is_const || p.kind != scalar_kind::i32))
      return fail("scalar parameter '" + name + "' must be a plain int (a size)");
    p.name = name;
    params.push_back(p);
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return params;
}

std::string render_signature(const std::vector<param>& params, std::string_view fn) {
  std::ostringstream os;
  os << "extern \"C\" void " << fn << "(";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i > 0)
      os << ", ";
    os << params[i].c_type() << " " << params[i].name;
  }
  os << ")";
  return os.str();
}

} // namespace leap::env
