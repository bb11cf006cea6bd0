// The C++ lexer of the emulation's source rewriter: tokens with positions and lines
// (comments skipped; string, char and raw string literals, pp-numbers and header names kept
// whole), plus small helpers over a token list that the rewriting passes share. Pure,
// thread-safe; used by env/cpu_emu/*.cpp only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace leap::emu {

enum class tk { ident, number, punct, literal, header_name };

struct token {
  tk kind;
  std::size_t pos;
  std::size_t len;
  int line;
  bool in_directive;
  bool directive_start = false;  // the '#' that opens a directive
};

std::vector<token> lex(std::string_view source);

// A replacement of source bytes [begin, end) (begin == end: an insertion).
struct edit {
  std::size_t begin, end;
  std::string text;
};

// Read-only helpers over a lexed source.
struct token_view {
  std::string_view src;
  const std::vector<token>& toks;

  std::string_view text(std::size_t i) const {
    return i < toks.size() ? src.substr(toks[i].pos, toks[i].len) : std::string_view{};
  }
  bool is(std::size_t i, std::string_view s) const { return i < toks.size() && text(i) == s; }
  bool punct(std::size_t i, char c) const {
    return i < toks.size() && toks[i].kind == tk::punct && src[toks[i].pos] == c;
  }
  bool ident(std::size_t i) const { return i < toks.size() && toks[i].kind == tk::ident; }
  // Index of the matching closer for the opener at `i` ((, [, {), or toks.size().
  std::size_t match_forward(std::size_t i) const;
  // Index of the matching opener for the closer at `i`, or toks.size().
  std::size_t match_backward(std::size_t i) const;
};

}  // namespace leap::emu
