// Implementation of rewrite_volatile_pointer (volatile_rewrite.hpp). Pure, thread-safe.
#include "env/cpu_emu/volatile_rewrite.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

namespace leap::emu {
namespace {

bool builtin_word(std::string_view w) {
  static const std::set<std::string_view> words = {"unsigned", "signed", "int", "long", "short",
                                                   "char", "float", "double", "bool"};
  return words.count(w) != 0;
}

// CUDA vector types (float4, uint2, ...) and other structs: a vref<T> cannot stand for them
// (member access), so they stay plain volatile.
bool aggregate_name(std::string_view w) {
  if (w == "dim3" || w == "half" || w == "__half" || w == "__nv_bfloat16") return true;
  const char last = w.empty() ? '\0' : w.back();
  if (last < '1' || last > '4') return false;
  std::string_view stem = w.substr(0, w.size() - 1);
  static const std::set<std::string_view> stems = {"char", "uchar", "short", "ushort", "int", "uint",
                                                   "long", "ulong", "longlong", "ulonglong", "float", "double"};
  return stems.count(stem) != 0;
}

// A type made of builtin words, or one (possibly qualified) name: [first, end) and its text.
bool type_at(const token_view& v, std::size_t first, std::size_t& end, std::string& type) {
  std::size_t j = first;
  type.clear();
  if (v.ident(j) && builtin_word(v.text(j))) {
    while (v.ident(j) && builtin_word(v.text(j))) {
      if (!type.empty()) type += ' ';
      type += std::string(v.text(j++));
    }
  } else {
    if (v.punct(j, ':') && v.punct(j + 1, ':')) { type += "::"; j += 2; }
    while (v.ident(j)) {
      type += std::string(v.text(j++));
      if (v.punct(j, ':') && v.punct(j + 1, ':') && v.ident(j + 2)) { type += "::"; j += 2; } else break;
    }
    if (type.empty() || aggregate_name(type) || type.find("__shared__") != std::string::npos ||
        type == "const" || type == "struct" || type == "class")
      return false;
  }
  end = j;
  return !type.empty();
}

// Whether token `i` lies directly inside a parenthesised list; returns the '(' in `open`.
bool inside_parens(const token_view& v, std::size_t i, std::size_t& open) {
  int depth = 0;
  for (std::size_t j = i; j-- > 0;) {
    if (v.punct(j, ')') || v.punct(j, ']') || v.punct(j, '}')) ++depth;
    else if (v.punct(j, '[') || v.punct(j, '{')) {
      if (depth-- == 0) return false;
    } else if (v.punct(j, '(')) {
      if (depth-- == 0) { open = j; return true; }
    } else if (depth == 0 && v.punct(j, ';')) {
      return false;
    }
  }
  return false;
}

// The '{' of the body after a parameter list closed at `close`, or toks.size().
std::size_t body_after(const token_view& v, std::size_t close) {
  std::size_t j = close + 1;
  while (j < v.toks.size() && (v.ident(j) || v.punct(j, '&'))) {  // const, noexcept, __restrict__...
    if (v.punct(j + 1, '(')) j = v.match_forward(j + 1);  // noexcept(...), __attribute__((...))
    ++j;
  }
  return v.punct(j, '{') ? j : v.toks.size();
}

}  // namespace

bool rewrite_volatile_pointer(const token_view& v, std::size_t i, std::vector<edit>& edits) {
  if (v.toks[i].in_directive) return false;
  // const may stand on either side of `volatile` and of the type: the pointee stays const.
  bool is_const = false;
  std::size_t type_begin = i, after = i + 1, type_end = 0, star = 0;
  if (i > 0 && v.is(i - 1, "const")) {
    is_const = true;
    type_begin = i - 1;
  }
  if (v.is(after, "const")) {
    is_const = true;
    ++after;
  }
  std::string type;
  if (type_at(v, after, type_end, type)) {  // [const] volatile [const] T [const] *
    star = type_end;
  } else {  // T [const] volatile [const] * (builtin words only)
    std::size_t b = i;
    while (b > 0 && ((v.ident(b - 1) && builtin_word(v.text(b - 1))) || v.is(b - 1, "const"))) --b;
    if (b == i || (b == type_begin && is_const && b + 1 == i)) return false;
    type_begin = b;
    type.clear();
    for (std::size_t k = b; k < i; ++k) {
      if (v.is(k, "const")) { is_const = true; continue; }
      type += (type.empty() ? "" : " ") + std::string(v.text(k));
    }
    if (type.empty()) return false;
    star = after;
  }
  if (v.is(star, "const")) {
    is_const = true;
    ++star;
  }
  if (is_const) type = "const " + type;
  if (!v.punct(star, '*') || v.punct(star + 1, '*')) return false;  // not a pointer, or volatile T**
  const std::size_t begin = v.toks[type_begin].pos, end = v.toks[star].pos + 1;
  const std::string vptr = "::leap_emu::vptr<" + type + ">";
  // A named parameter of a function definition: keep the parameter, wrap it in the body.
  std::size_t name = star + 1;
  while (v.is(name, "const") || v.is(name, "__restrict__") || v.is(name, "__restrict")) ++name;
  std::size_t open = 0;
  if (v.ident(name) && (v.punct(name + 1, ',') || v.punct(name + 1, ')')) && inside_parens(v, i, open)) {
    const std::size_t close = v.match_forward(open);
    const std::size_t body = close < v.toks.size() ? body_after(v, close) : v.toks.size();
    if (body >= v.toks.size()) return false;  // a prototype: its definition gets the same treatment
    const std::string old_name(v.text(name));
    const std::string kept = "leap_emu_volatile_" + old_name;
    edits.push_back({v.toks[name].pos, v.toks[name].pos + v.toks[name].len, kept});
    const std::size_t at = v.toks[body].pos + 1;
    edits.push_back({at, at, " " + vptr + " " + old_name + "(" + kept + ");"});
    return true;
  }
  const bool space_follows = end < v.src.size() && (v.src[end] == ' ' || v.src[end] == '\t');
  edits.push_back({begin, end, space_follows ? vptr : vptr + " "});
  return true;
}

bool rewrite_volatile_shared_array(const token_view& v, std::size_t i, std::vector<edit>& edits, std::size_t& last) {
  if (v.toks[i].in_directive) return false;
  std::size_t first = i, j = i + 1;
  if (v.is(j, "volatile")) ++j;
  else if (i > 0 && v.is(i - 1, "volatile")) first = i - 1;
  else return false;
  if (first > 0 && v.is(first - 1, "static")) --first;
  std::size_t type_end = 0;
  std::string type;
  if (!type_at(v, j, type_end, type)) return false;
  const std::size_t name = type_end;
  if (!v.ident(name) || !v.punct(name + 1, '[')) return false;
  const std::size_t close = v.match_forward(name + 1);
  if (close >= v.toks.size() || !v.punct(close + 1, ';')) return false;  // one declarator, 1-D
  int depth = 0;  // only inside a function body (a vptr at file scope would not be per block)
  for (std::size_t k = 0; k < first; ++k) depth += v.punct(k, '{') ? 1 : v.punct(k, '}') ? -1 : 0;
  if (depth <= 0) return false;
  const std::string old_name(v.text(name));
  const std::string kept = "leap_emu_volatile_" + old_name;
  const std::size_t begin = v.toks[first].pos, end = v.toks[close + 1].pos + 1;
  const std::string_view dims = v.src.substr(v.toks[name + 1].pos, v.toks[close].pos + 1 - v.toks[name + 1].pos);
  std::string out = "static thread_local volatile " + type + " " + kept + std::string(dims) + "; ::leap_emu::vptr<" +
                    type + "> " + old_name + "(" + kept + ");";
  const std::string_view original = v.src.substr(begin, end - begin);
  for (auto n = std::count(original.begin(), original.end(), '\n'); n > 0; --n) out += '\n';
  edits.push_back({begin, end, out});
  last = close + 1;
  return true;
}

}  // namespace leap::emu
