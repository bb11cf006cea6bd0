// Fence scanning by lines; no regex.
#include "policy/text/code_extract.hpp"

#include "common/strings.hpp"
#include "policy/text/special_tokens.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace leap::policy {
namespace {

struct block {
  std::string_view lang;
  std::string_view body;
};

bool code_lang(std::string_view lang) {
  std::string l;
  for (char c : lang) l.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (const char* ok : {"", "cuda", "cu", "cuh", "c++", "cpp", "cxx", "cc", "c"})
    if (l == ok) return true;
  return false;
}

std::size_t line_end(std::string_view s, std::size_t i) {
  std::size_t e = s.find('\n', i);
  return e == std::string_view::npos ? s.size() : e;
}

bool at_line_start(std::string_view s, std::size_t f) {
  while (f > 0 && (s[f - 1] == ' ' || s[f - 1] == '\t')) --f;
  return f == 0 || s[f - 1] == '\n';
}

// Every ``` block: an opening fence (at a line start, or anywhere when `anywhere`), its info
// word, the body up to a line that starts (after indentation) with ``` or to the end of the text.
std::vector<block> fenced_blocks(std::string_view s, bool anywhere) {
  std::vector<block> out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t f = s.find("```", pos);
    if (f == std::string_view::npos) break;
    if (!anywhere && !at_line_start(s, f)) {
      pos = f + 3;
      continue;
    }
    std::size_t info_end = line_end(s, f);
    std::string_view info = trim(s.substr(f + 3, info_end - f - 3));
    std::string_view lang = info.substr(0, std::min(info.find(' '), info.size()));
    std::size_t body_start = std::min(info_end + 1, s.size());
    std::size_t close = s.size(), next = s.size();
    for (std::size_t i = body_start; i < s.size();) {
      std::size_t e = line_end(s, i);
      std::string_view line = s.substr(i, e - i);
      std::size_t ind = line.find_first_not_of(" \t");
      if (ind != std::string_view::npos && line.substr(ind, 3) == "```") {
        close = i;
        next = e;
        break;
      }
      i = e + 1;
    }
    out.push_back({lang, s.substr(body_start, close - body_start)});
    pos = next;
  }
  return out;
}

bool blank(std::string_view s) { return trim(s).empty(); }

std::string finish(std::string_view code) {
  // Drop leading blank lines and trailing white space; end with one newline.
  std::size_t start = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '\n') start = i + 1;
    else if (code[i] != ' ' && code[i] != '\t' && code[i] != '\r') break;
  }
  std::string_view v = code.substr(start);
  std::size_t end = v.find_last_not_of(" \t\r\n");
  return std::string(v.substr(0, end == std::string_view::npos ? 0 : end + 1)) + "\n";
}

} // namespace

extracted extract_code(std::string_view s) {
  for (const auto& tok : special::all()) {
    std::size_t p = s.find(tok);
    if (p != std::string_view::npos) s = s.substr(0, p);
  }
  if (blank(s)) return {false, "", "the completion is empty: no code block"};

  const block* first = nullptr;
  std::vector<block> blocks;
  for (bool anywhere : {false, true}) {
    blocks = fenced_blocks(s, anywhere);
    for (const auto& b : blocks) {
      if (!code_lang(b.lang) || blank(b.body)) continue;
      if (b.body.find("solution") != std::string_view::npos) return {true, finish(b.body), ""};
      if (!first) first = &b;
    }
    if (first) return {true, finish(first->body), ""};
  }

  if (s.find("solution") != std::string_view::npos) {
    std::size_t start = std::string_view::npos;
    for (const char* marker : {"#include", "__global__", "extern \"C\""})
      start = std::min(start, s.find(marker));
    if (start != std::string_view::npos) {
      std::size_t bol = s.rfind('\n', start);
      start = bol == std::string_view::npos ? 0 : bol + 1;
      std::size_t last = s.rfind('}');
      if (last != std::string_view::npos && last > start) {
        std::string_view code = s.substr(start, last + 1 - start);
        if (code.find("solution") != std::string_view::npos) return {true, finish(code), ""};
      }
    }
  }
  if (!blocks.empty())
    return {false, "", "no ```cuda code block with code in it (found only other or empty blocks)"};
  return {false, "", "no ```cuda code block and no recognisable CUDA code defining solution"};
}

} // namespace leap::policy
