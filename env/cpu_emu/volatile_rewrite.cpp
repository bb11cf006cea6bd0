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


// ---- __shared__ declarations -------------------------------------------------------------

namespace {

bool attribute_word(std::string_view w) {
  return w == "__align__" || w == "alignas" || w == "__attribute__" || w == "__builtin_align__" || w == "__declspec";
}

// Words that may stand before `__shared__` in its declaration on another line than it.
bool specifier_word(std::string_view w) {
  return builtin_word(w) || w == "extern" || w == "static" || w == "volatile" || w == "const" || w == "__device__" ||
         w == "void";
}

// The first token a directive's replacement text may use (after `#define NAME` or `NAME(...)`).
std::size_t directive_body(const token_view& v, std::size_t i) {
  std::size_t d = i;
  while (d > 0 && !v.toks[d].directive_start) --d;
  if (!v.is(d + 1, "define") || !v.ident(d + 2)) return d + 1;
  const std::size_t name = d + 2;
  if (v.punct(name + 1, '(') && v.toks[name].pos + v.toks[name].len == v.toks[name + 1].pos)
    return v.match_forward(name + 1) + 1;
  return name + 1;
}

// First token of the declaration whose `__shared__` is token `i`: specifiers, type words and
// attributes before it, up to the end of the previous statement.
std::size_t decl_begin(const token_view& v, std::size_t i) {
  const bool dir = v.toks[i].in_directive;
  const std::size_t lo = dir ? directive_body(v, i) : 0;
  std::size_t b = i;
  while (b > lo) {
    const std::size_t j = b - 1;
    if (v.toks[j].in_directive != dir) break;
    if (v.ident(j)) {
      const std::string_view w = v.text(j);
      if (w == "return" || w == "else" || w == "do" || w == "case" || w == "goto") break;
      if (!specifier_word(w) && v.toks[j].line != v.toks[i].line) break;  // a macro use ending the line above
      b = j;
    } else if (v.punct(j, ')')) {
      const std::size_t o = v.match_backward(j);
      if (o >= v.toks.size() || o <= lo || !attribute_word(v.text(o - 1))) break;
      b = o - 1;
    } else if (v.punct(j, ']') && j > 0 && v.punct(j - 1, ']')) {
      const std::size_t o = v.match_backward(j);
      if (o >= v.toks.size() || o < lo || !v.punct(o + 1, '[')) break;
      b = o;
    } else if (v.punct(j, ':') && j > 0 && v.punct(j - 1, ':') && v.toks[j - 1].pos + 1 == v.toks[j].pos) {
      b = j - 1;
    } else {
      break;
    }
  }
  return b;
}

// Whether token `first` is inside a block (a function body) rather than at namespace scope.
bool in_block(const token_view& v, std::size_t first) {
  int depth = 0;
  for (std::size_t j = first; j-- > 0;) {
    if (v.punct(j, '}')) ++depth;
    else if (v.punct(j, '{') && depth-- == 0) {
      // the innermost open brace: namespace N {, namespace {, extern "C" {
      if (j >= 1 && v.is(j - 1, "namespace")) return false;
      if (j >= 2 && v.ident(j - 1) && v.is(j - 2, "namespace")) return false;
      if (j >= 2 && v.toks[j - 1].kind == tk::literal && v.is(j - 2, "extern")) return false;
      return true;
    }
  }
  return false;
}

struct declarator {
  std::size_t name = 0;
  std::size_t dims_begin = 0, dims_end = 0;  // the [..] groups, tokens [begin, end)
  bool array = false, unsized = false;
};

// Token texts joined as written (a space where the source had a gap).
std::string joined(const token_view& v, const std::vector<std::size_t>& ks) {
  std::string out;
  std::size_t at = std::string::npos;
  for (std::size_t k : ks) {
    if (!out.empty() && v.toks[k].pos != at) out += ' ';
    out += std::string(v.text(k));
    at = v.toks[k].pos + v.toks[k].len;
  }
  return out;
}

std::string source_of(const token_view& v, std::size_t first, std::size_t last_excl) {
  if (first >= last_excl) return {};
  return std::string(v.src.substr(v.toks[first].pos, v.toks[last_excl - 1].pos + v.toks[last_excl - 1].len - v.toks[first].pos));
}

}  // namespace

shared_rewrite rewrite_shared_declaration(const token_view& v, std::size_t i, std::vector<edit>& edits) {
  shared_rewrite out;
  out.last = i;
  const bool dir = v.toks[i].in_directive;
  const std::size_t first = decl_begin(v, i);
  out.line = v.toks[first].line;
  // The end: ';', or the end of the directive for a declaration inside a macro.
  std::size_t end = i + 1;
  bool complete = false;
  for (; end < v.toks.size(); ++end) {
    if (v.toks[end].in_directive != dir || (dir && v.toks[end].directive_start)) { complete = dir; break; }
    if (v.punct(end, ';')) { complete = true; break; }
    if (v.punct(end, '=') || v.punct(end, '{') || v.punct(end, '}') || v.punct(end, ')')) break;
    if (v.punct(end, '(') || v.punct(end, '[')) {
      end = v.match_forward(end);
      if (end >= v.toks.size()) break;
    }
  }
  if (end >= v.toks.size() && dir) complete = true;
  // Specifiers, type, attributes and declarators.
  bool is_extern = false, is_static = false, is_volatile = false, pointer = false, odd = !complete;
  std::vector<std::size_t> type;
  std::vector<std::pair<std::size_t, std::size_t>> attrs;  // token ranges [first, last]
  std::vector<declarator> decls;
  for (std::size_t k = first; k < end && !odd;) {
    const std::string_view w = v.text(k);
    if (v.ident(k) && attribute_word(w) && v.punct(k + 1, '(')) {
      attrs.push_back({k, v.match_forward(k + 1)});
      k = attrs.back().second + 1;
    } else if (v.punct(k, '[') && v.punct(k + 1, '[')) {
      attrs.push_back({k, v.match_forward(k)});
      k = attrs.back().second + 1;
    } else if (w == "extern" || w == "static" || w == "__shared__" || w == "__device__" ||
               (w == "volatile" && !pointer && decls.empty())) {
      is_extern |= w == "extern";
      is_static |= w == "static";
      is_volatile |= w == "volatile";
      ++k;
    } else if (v.ident(k) && (!type.empty() || !decls.empty()) &&
               (v.punct(k + 1, '[') || v.punct(k + 1, ',') || k + 1 == end || attribute_word(v.text(k + 1)))) {
      if (!decls.empty() && !v.punct(k - 1, ',')) { odd = true; break; }
      declarator d;
      d.name = k;
      d.dims_begin = d.dims_end = k + 1;
      while (v.punct(d.dims_end, '[') && !v.punct(d.dims_end + 1, '[')) d.dims_end = v.match_forward(d.dims_end) + 1;
      d.array = d.dims_end > d.dims_begin;
      d.unsized = d.array && v.punct(d.dims_begin + 1, ']');
      decls.push_back(d);
      k = d.dims_end;
    } else if (v.punct(k, ',') && !decls.empty()) {
      ++k;
    } else if (decls.empty()) {
      if (v.punct(k, '*') || v.punct(k, '&')) pointer = true;
      type.push_back(k++);
    } else {
      odd = true;
    }
  }
  if (decls.empty() || type.empty()) odd = true;
  const std::string elem = joined(v, type);
  const std::string vtype = is_volatile ? "volatile " + elem : elem;
  // A type the lockstep pointer can stand for: builtin words or one (qualified) name.
  std::size_t type_end = 0;
  std::string lockstep_type;
  const bool contiguous = !type.empty() && type.back() - type.front() + 1 == type.size();
  const bool lockstep_ok = contiguous && !pointer && type_at(v, type.front(), type_end, lockstep_type) &&
                           type_end == type.back() + 1;
  std::string text;
  if (is_extern) {
    for (const declarator& d : decls) odd |= !d.unsized;
    if (odd) {
      out.error = "unsupported form of an extern __shared__ declaration (expected `extern __shared__ T name[];`)";
      out.last = end < v.toks.size() ? end : v.toks.size() - 1;
      return out;
    }
    // Every dynamic shared array of a launch aliases the same buffer (aligned to 256 bytes).
    const std::string buffer = "::leap_emu::detail::dynamic_smem()";
    for (const declarator& d : decls) {
      const std::string name(v.text(d.name));
      const std::string rest = source_of(v, d.dims_begin + 2, d.dims_end);  // dimensions after []
      if (!text.empty()) text += ' ';
      if (is_volatile && lockstep_ok && rest.empty()) {
        text += "static thread_local const ::leap_emu::vptr<" + lockstep_type + "> " + name + "(static_cast<volatile " +
                lockstep_type + "*>(" + buffer + "));";
        ++out.lockstep;
      } else if (!rest.empty()) {
        text += "static thread_local " + vtype + " (*const " + name + ")" + rest + " = reinterpret_cast<" + vtype +
                " (*)" + rest + ">(" + buffer + ");";
      } else {
        text += "static thread_local " + vtype + "* const " + name + " = static_cast<" + vtype + "*>(" + buffer + ");";
      }
    }
  } else if (is_volatile && !odd && !dir && lockstep_ok && decls.size() == 1 && decls[0].array && !decls[0].unsized &&
             v.match_forward(decls[0].dims_begin) + 1 == decls[0].dims_end && in_block(v, first)) {
    // `__shared__ volatile T name[N];` in a function: the storage keeps its alignment under a new
    // name and `name` becomes a lockstep pointer to it.
    const declarator& d = decls[0];
    const std::string name(v.text(d.name)), kept = "leap_emu_volatile_" + name;
    for (const auto& [a, b] : attrs) text += source_of(v, a, b + 1) + " ";
    text += "static thread_local volatile " + lockstep_type + " " + kept + source_of(v, d.dims_begin, d.dims_end) +
            "; ::leap_emu::vptr<" + lockstep_type + "> " + name + "(" + kept + ");";
    ++out.lockstep;
  } else {
    // Anything else keeps its form: __shared__ becomes block storage (thread_local per worker).
    edits.push_back({v.toks[i].pos, v.toks[i].pos + v.toks[i].len, is_static ? "thread_local" : "static thread_local"});
    return out;
  }
  if (!v.punct(end, ';') && !text.empty() && text.back() == ';') text.pop_back();  // a macro's use adds it
  const std::size_t begin = v.toks[first].pos;
  const std::size_t stop = end < v.toks.size() && v.punct(end, ';') ? v.toks[end].pos + 1
                                                                      : v.toks[end - 1].pos + v.toks[end - 1].len;
  const std::string_view original = v.src.substr(begin, stop - begin);
  for (auto n = std::count(original.begin(), original.end(), '\n'); n > 0; --n) text += dir ? "\\\n" : "\n";
  edits.push_back({begin, stop, text});
  out.last = v.punct(end, ';') ? end : end - 1;
  return out;
}

}  // namespace leap::emu
