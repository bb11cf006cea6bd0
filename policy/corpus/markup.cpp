// Template markup (see corpus.hpp): rendering, site counting, mutation and typo injection.
#include "policy/corpus/kernel_corpus.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace leap::corpus {

namespace {

constexpr char removed_mark = '\x01';

struct walk_state {
  bug_kind kind = bug_kind::none;
  int target = -1;
  int seen = 0;
  bool applied = false;
  std::string error;
};

// True when this site (of `k`) is the one to mutate; counts it either way.
bool hit(walk_state& s, bug_kind k) {
  if (k != s.kind)
    return false;
  bool h = s.seen == s.target;
  ++s.seen;
  if (h)
    s.applied = true;
  return h;
}

bug_kind alt_kind(char c) {
  switch (c) {
  case 'I': return bug_kind::wrong_index;
  case 'R': return bug_kind::wrong_reduction;
  case 'B': return bug_kind::missing_bounds;
  default: return bug_kind::none;
  }
}

// Finds the `}X@` that closes an `@X{` opened just before `from`, honouring nesting of the same X.
std::size_t find_close(std::string_view m, std::size_t from, char x) {
  std::string open = std::string("@") + x + "{", close = std::string("}") + x + "@";
  int depth = 1;
  for (std::size_t i = from; i + 2 < m.size() + 1; ++i) {
    if (m.compare(i, 3, open) == 0) {
      ++depth;
      i += 2;
    } else if (m.compare(i, 3, close) == 0) {
      if (--depth == 0)
        return i;
      i += 2;
    }
  }
  return std::string_view::npos;
}

void walk(std::string_view m, walk_state& s, std::string& out) {
  for (std::size_t i = 0; i < m.size();) {
    if (m.compare(i, 2, "$<") == 0) {
      out += hit(s, bug_kind::off_by_one) ? "<=" : "<";
      i += 2;
    } else if (m.compare(i, 3, "$>=") == 0) {
      out += hit(s, bug_kind::off_by_one) ? ">" : ">=";
      i += 3;
    } else if (m.compare(i, 5, "$SYNC") == 0) {
      if (hit(s, bug_kind::missing_sync))
        out += removed_mark;
      else
        out += "__syncthreads();";
      i += 5;
    } else if (m[i] == '@' && i + 2 < m.size() && m[i + 2] == '{'
               && std::string_view("GZIRB").find(m[i + 1]) != std::string_view::npos) {
      char x = m[i + 1];
      auto close = find_close(m, i + 3, x);
      if (close == std::string_view::npos) {
        s.error = std::string("unclosed @") + x + "{ marker";
        return;
      }
      auto body = m.substr(i + 3, close - (i + 3));
      i = close + 3;
      if (x == 'G' || x == 'Z') {
        if (hit(s, x == 'G' ? bug_kind::missing_bounds : bug_kind::uninit_output))
          out += removed_mark;
        else
          walk(body, s, out);
        continue;
      }
      auto sep = body.find("~|~");
      if (sep == std::string_view::npos) {
        s.error = std::string("@") + x + "{ marker without ~|~";
        return;
      }
      if (hit(s, alt_kind(x)))
        walk(body.substr(sep + 3), s, out);
      else
        walk(body.substr(0, sep), s, out);
    } else {
      out += m[i++];
    }
  }
}

// `line` without its // comment (outside string and character literals), trailing blanks dropped.
// True when there was a comment.
bool cut_comment(std::string& line) {
  char quote = 0;
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '/' && line[i + 1] == '/') {
      line.erase(i);
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
        line.pop_back();
      return true;
    }
  }
  return false;
}

// Drops comments (the corpus is comment-free: every completion token costs the small model
// training time, and a comment carries nothing the verdict depends on) and lines left blank by a
// removed comment or marker; strips the remaining marks.
std::string tidy(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (cut_comment(line) && line.empty())
      continue;
    if (line.find(removed_mark) != std::string::npos) {
      line.erase(std::remove(line.begin(), line.end(), removed_mark), line.end());
      if (std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); }))
        continue;
    }
    if (!first)
      out += '\n';
    out += line;
    first = false;
  }
  if (!text.empty() && text.back() == '\n')
    out += '\n';
  return out;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Occurrences of `word` as a whole identifier.
std::vector<std::size_t> find_word(std::string_view s, std::string_view word) {
  std::vector<std::size_t> at;
  for (auto p = s.find(word); p != std::string_view::npos; p = s.find(word, p + 1)) {
    bool left = p == 0 || !ident_char(s[p - 1]);
    bool right = p + word.size() >= s.size() || !ident_char(s[p + word.size()]);
    if (left && right)
      at.push_back(p);
  }
  return at;
}

// The names declared from the first kernel on: parameters and locals of a scalar or pointer type
// (`const float* x`, `int n`, `const int i = ...`, `float acc;`, `for (int k = 0; ...`).
std::vector<std::string> declared_names(std::string_view src) {
  static const char* const types[] = {"int", "float", "float4", "float2", "double", "unsigned"};
  std::vector<std::string> names;
  auto word_at = [&](std::size_t p) {
    std::size_t e = p;
    while (e < src.size() && ident_char(src[e]))
      ++e;
    return src.substr(p, e - p);
  };
  for (const char* ty : types)
    for (auto p : find_word(src, ty)) {
      std::size_t q = p + std::string_view(ty).size();
      while (q < src.size() && (src[q] == '*' || src[q] == ' ' || src[q] == '&'))
        ++q;
      if (q >= src.size() || !(std::isalpha(static_cast<unsigned char>(src[q])) || src[q] == '_'))
        continue;
      auto name = word_at(q);
      std::size_t after = q + name.size();
      while (after < src.size() && src[after] == ' ')
        ++after;
      if (after >= src.size() || std::string_view("=,);[").find(src[after]) == std::string_view::npos)
        continue;
      if (name == "const" || name.rfind("__", 0) == 0)
        continue;
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.emplace_back(name);
    }
  std::sort(names.begin(), names.end());
  return names;
}

// swapped_name: one use (from the first kernel on; a member such as blockIdx.x is not a use of x)
// of a declared name becomes another declared name of the source.
result<std::string> swap_name(std::string src, std::size_t kernel_start, std::uint64_t pick) {
  auto names = declared_names(std::string_view(src).substr(kernel_start));
  if (names.size() < 2)
    return make_error("inject_typo: fewer than two declared names to swap");
  std::vector<std::pair<std::size_t, std::size_t>> spots; // (position, name index)
  for (std::size_t k = 0; k < names.size(); ++k)
    for (auto p : find_word(std::string_view(src).substr(kernel_start), names[k]))
      if (src[kernel_start + p - 1] != '.') // blockIdx.x is a member, not a use of x
        spots.emplace_back(kernel_start + p, k);
  std::sort(spots.begin(), spots.end());
  auto [p, k] = spots[pick % spots.size()];
  auto other = (k + 1 + (pick / spots.size()) % (names.size() - 1)) % names.size();
  src.replace(p, names[k].size(), names[other]);
  return src;
}

// Statement lines inside the code after the first kernel, ending in ';': (line start, position
// of the ';'). Not `for` headers, returns (`if (..) return` + the next statement still parses, a
// return of a void call), comments, directives, __shared__ declarations or closing braces.
std::vector<std::pair<std::size_t, std::size_t>> statement_lines(const std::string& src,
                                                                  std::size_t kernel_start) {
  std::vector<std::pair<std::size_t, std::size_t>> spots;
  std::size_t pos = kernel_start;
  while (pos < src.size()) {
    auto eol = src.find('\n', pos);
    if (eol == std::string::npos)
      eol = src.size();
    std::string_view line(src.data() + pos, eol - pos);
    auto t = line.find_last_not_of(" \t\r");
    auto f = line.find_first_not_of(" \t");
    if (t != std::string_view::npos && line[t] == ';' && f != std::string_view::npos) {
      auto body = line.substr(f);
      bool skip = body.rfind("for", 0) == 0 || body.find("return") != std::string_view::npos
                  || body.rfind("//", 0) == 0 || body.rfind("#", 0) == 0
                  || body.rfind("__shared__", 0) == 0 || body.rfind("extern", 0) == 0
                  || body.rfind("}", 0) == 0 || body.find("//") != std::string_view::npos;
      if (!skip)
        spots.emplace_back(pos, pos + t);
    }
    pos = eol + 1;
  }
  return spots;
}

} // namespace

std::string render(std::string_view markup) {
  walk_state s;
  std::string out;
  walk(markup, s, out);
  return tidy(out);
}

int count_sites(std::string_view markup, bug_kind kind) {
  walk_state s;
  s.kind = kind;
  std::string out;
  walk(markup, s, out);
  return s.seen;
}

result<std::string> mutate(std::string_view markup, bug_kind kind, int site) {
  if (acts_on_source(kind) || kind == bug_kind::none)
    return make_error(std::string("mutate: ") + to_string(kind) + " is not a markup mutation");
  walk_state s;
  s.kind = kind;
  s.target = site;
  std::string out;
  walk(markup, s, out);
  if (!s.error.empty())
    return make_error("mutate: " + s.error);
  if (!s.applied)
    return make_error(std::string("mutate: no site ") + std::to_string(site) + " of "
                      + to_string(kind));
  return tidy(out);
}

result<std::string> inject_typo(std::string_view source, bug_kind kind, std::uint64_t pick) {
  std::string src(source);
  auto kernel_start = src.find("__global__");
  if (kernel_start == std::string::npos)
    return make_error("inject_typo: no __global__ function");
  if (kind == bug_kind::typo_semicolon) {
    auto spots = statement_lines(src, kernel_start);
    if (spots.empty())
      return make_error("inject_typo: no statement to break");
    src.erase(spots[pick % spots.size()].second, 1);
    return src;
  }
  if (kind == bug_kind::typo_bracket) {
    // A `)` or `]` of a statement line: dropped (a `)` only) or doubled, by `pick`.
    std::vector<std::size_t> closers;
    for (auto [start, semi] : statement_lines(src, kernel_start))
      for (auto p = start; p < semi; ++p)
        if (src[p] == ')' || src[p] == ']')
          closers.push_back(p);
    if (closers.empty())
      return make_error("inject_typo: no bracket to unbalance");
    const auto p = closers[(pick / 2) % closers.size()];
    if (pick % 2 == 0 && src[p] == ')')
      src.erase(p, 1);
    else
      src.insert(p, 1, src[p]);
    return src;
  }
  if (kind == bug_kind::typo_identifier) {
    static const std::vector<std::pair<std::string, std::string>> typos{
      {"threadIdx", "threadIdex"}, {"blockIdx", "blockIndex"}, {"blockDim", "blockDims"},
      {"gridDim", "gridDims"}, {"__syncthreads", "__syncthread"},
      {"cudaDeviceSynchronize", "cudaDeviceSynchronise"}, {"atomicAdd", "atomicAd"},
      {"__shfl_down_sync", "__shfl_down_synch"}, {"__shfl_xor_sync", "__shfl_xor_synch"},
      {"expf", "expff"}, {"fmaxf", "fmaxff"}, {"cudaMemset", "cudaMemSet"}};
    std::vector<std::pair<std::size_t, std::size_t>> spots; // (position, typo index)
    for (std::size_t k = 0; k < typos.size(); ++k)
      for (auto p : find_word(std::string_view(src).substr(kernel_start), typos[k].first))
        spots.emplace_back(kernel_start + p, k);
    if (spots.empty())
      return make_error("inject_typo: no identifier to misspell");
    std::sort(spots.begin(), spots.end());
    auto [p, k] = spots[pick % spots.size()];
    src.replace(p, typos[k].first.size(), typos[k].second);
    return src;
  }
  if (kind == bug_kind::typo_type) {
    // The first const pointer parameter of some kernel: float <-> int.
    std::vector<std::size_t> kernels;
    for (auto p = src.find("__global__"); p != std::string::npos; p = src.find("__global__", p + 1))
      kernels.push_back(p);
    for (std::size_t r = 0; r < kernels.size(); ++r) {
      auto k = kernels[(pick + r) % kernels.size()];
      auto open = src.find('(', k);
      auto close = src.find(')', open);
      if (open == std::string::npos || close == std::string::npos)
        continue;
      auto params = src.substr(open, close - open);
      auto f = params.find("const float*");
      auto i = params.find("const int*");
      if (f != std::string::npos && (i == std::string::npos || f < i)) {
        src.replace(open + f, 12, "const int*");
        return src;
      }
      if (i != std::string::npos) {
        src.replace(open + i, 10, "const float*");
        return src;
      }
    }
    return make_error("inject_typo: no const pointer parameter to retype");
  }
  if (kind == bug_kind::swapped_name)
    return swap_name(src, kernel_start, pick);
  if (kind == bug_kind::sampling_noise) {
    // 2 + pick % 3 slips, each a swapped name, a misspelled identifier or a lost `;`, drawn from
    // `pick` (a 64-bit LCG step per slip); a slip that finds no spot is skipped.
    static const bug_kind slips[] = {bug_kind::swapped_name, bug_kind::swapped_name,
                                     bug_kind::typo_identifier, bug_kind::typo_semicolon};
    const int n = 2 + static_cast<int>(pick % 3);
    std::uint64_t state = pick;
    int applied = 0;
    for (int k = 0; k < n; ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      auto next = inject_typo(src, slips[(state >> 33) % 4], state >> 17);
      if (next) {
        src = std::move(*next);
        ++applied;
      }
    }
    if (applied == 0)
      return make_error("inject_typo: no spot for any slip");
    return src;
  }
  return make_error(std::string("inject_typo: ") + to_string(kind) + " is not a typo");
}

const char* to_string(bug_kind b) {
  switch (b) {
  case bug_kind::none: return "none";
  case bug_kind::off_by_one: return "off_by_one";
  case bug_kind::missing_bounds: return "missing_bounds";
  case bug_kind::wrong_index: return "wrong_index";
  case bug_kind::missing_sync: return "missing_sync";
  case bug_kind::wrong_reduction: return "wrong_reduction";
  case bug_kind::uninit_output: return "uninit_output";
  case bug_kind::typo_semicolon: return "typo_semicolon";
  case bug_kind::typo_identifier: return "typo_identifier";
  case bug_kind::typo_type: return "typo_type";
  case bug_kind::swapped_name: return "swapped_name";
  case bug_kind::sampling_noise: return "sampling_noise";
  case bug_kind::typo_bracket: return "typo_bracket";
  }
  return "?";
}

bool parse_bug_kind(std::string_view text, bug_kind& out) {
  for (auto k : all_bug_kinds())
    if (text == to_string(k)) {
      out = k;
      return true;
    }
  if (text == "none") {
    out = bug_kind::none;
    return true;
  }
  return false;
}

const char* to_string(variant_kind k) { return k == variant_kind::solution ? "solution" : "buggy"; }

const std::vector<bug_kind>& all_bug_kinds() {
  static const std::vector<bug_kind> kinds{
    bug_kind::off_by_one,    bug_kind::missing_bounds,  bug_kind::wrong_index,
    bug_kind::missing_sync,  bug_kind::wrong_reduction, bug_kind::uninit_output,
    bug_kind::typo_semicolon, bug_kind::typo_identifier, bug_kind::typo_type,
    bug_kind::swapped_name, bug_kind::sampling_noise, bug_kind::typo_bracket};
  return kinds;
}

} // namespace leap::corpus
