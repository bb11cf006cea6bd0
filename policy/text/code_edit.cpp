#include "policy/text/code_edit.hpp"

#include <algorithm>
#include <vector>

namespace leap::policy {
namespace {

constexpr std::string_view search_marker = "<<<<<<< SEARCH";
constexpr std::string_view divider = "=======";
constexpr std::string_view replace_marker = ">>>>>>> REPLACE";

std::vector<std::string> lines_of(std::string_view s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < s.size()) {
    auto nl = s.find('\n', at);
    if (nl == std::string_view::npos) nl = s.size();
    out.emplace_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& v, std::size_t from, std::size_t to) {
  std::string s;
  for (std::size_t i = from; i < to; ++i) s += v[i] + "\n";
  return s;
}

std::string rstrip(std::string_view s) {
  auto n = s.size();
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) --n;
  return std::string(s.substr(0, n));
}

// The first place at or after `from` where `needle` (whole lines) starts a line of `hay`.
std::size_t find_lines(const std::string& hay, const std::string& needle, std::size_t from = 0) {
  for (auto at = hay.find(needle, from); at != std::string::npos; at = hay.find(needle, at + 1))
    if (at == 0 || hay[at - 1] == '\n') return at;
  return std::string::npos;
}

std::size_t count_of(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = find_lines(hay, needle); at != std::string::npos; at = find_lines(hay, needle, at + 1)) ++n;
  return n;
}

// A changed region: lines [a0, a1) of `before` become lines [b0, b1) of `after`.
struct hunk {
  std::size_t a0, a1, b0, b1;
};

// The changed regions of a longest-common-subsequence line diff, in order.
std::vector<hunk> diff_lines(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const std::size_t n = a.size(), m = b.size();
  // lcs[i][j]: length of the LCS of a[i..] and b[j..].
  std::vector<std::vector<std::size_t>> lcs(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<hunk> out;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i, ++j;
      continue;
    }
    hunk h{i, i, j, j};
    while ((i < n || j < m) && !(i < n && j < m && a[i] == b[j])) {
      if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]))
        ++j;
      else
        ++i;
    }
    h.a1 = i;
    h.b1 = j;
    out.push_back(h);
  }
  return out;
}

// The line at or after `from` that is the `want` marker; lines.size() when another marker comes
// first or there is none.
std::size_t next_marker(const std::vector<std::string>& lines, std::size_t from, std::string_view want) {
  for (std::size_t k = from; k < lines.size(); ++k) {
    const auto l = rstrip(lines[k]);
    if (l == want) return k;
    if (l == search_marker || l == divider || l == replace_marker) break;
  }
  return lines.size();
}

} // namespace

std::string render_edit(const std::string& before, const std::string& after) {
  std::string base = before;
  if (!base.empty() && base.back() != '\n') base += '\n';
  const auto a = lines_of(base), b = lines_of(after);
  auto hunks = diff_lines(a, b);
  if (hunks.empty()) return {};
  // Widen a hunk by one common line at a time (the one before it, else the one after it) until
  // its SEARCH text is non-empty and occurs once in `before` (an insertion has no old lines of
  // its own); hunks that come to touch are merged, so every range stays aligned.
  std::vector<hunk> hs;
  for (;;) {
    hs.clear();
    for (const auto& h : hunks) {
      if (!hs.empty() && hs.back().a1 >= h.a0) {
        hs.back().a1 = h.a1;
        hs.back().b1 = h.b1;
      } else {
        hs.push_back(h);
      }
    }
    hunks = hs;
    bool widened = false;
    for (std::size_t k = 0; k < hunks.size() && !widened; ++k) {
      auto& h = hunks[k];
      const auto search = join_lines(a, h.a0, h.a1);
      if (h.a1 > h.a0 && count_of(base, search) == 1) continue;
      if (h.a0 > 0) {
        --h.a0, --h.b0; // a common line, or the end of the hunk before (merged next round)
        widened = true;
      } else if (h.a1 < a.size()) {
        ++h.a1, ++h.b1;
        widened = true;
      } // else: the whole file, unique by definition
    }
    if (!widened) break;
  }
  const auto& merged = hunks;
  std::string s = "```edit\n";
  for (const auto& h : merged) {
    s += std::string(search_marker) + "\n" + join_lines(a, h.a0, h.a1) + std::string(divider) + "\n" +
         join_lines(b, h.b0, h.b1) + std::string(replace_marker) + "\n";
  }
  return s + "```";
}

bool has_edits(std::string_view completion) {
  return completion.find(search_marker) != std::string_view::npos;
}

result<std::string> apply_edits(const std::string& before, std::string_view completion) {
  std::string code = before;
  if (code.empty() || code.back() != '\n') code += '\n';
  const auto lines = lines_of(completion);
  int block = 0;
  std::size_t i = 0;
  while (i < lines.size()) {
    if (rstrip(lines[i]) != search_marker) {
      ++i;
      continue;
    }
    ++block;
    const std::string which = "edit block " + std::to_string(block);
    // A block is SEARCH, its old lines, =======, its new lines, REPLACE; no other marker between.
    const std::size_t mid = next_marker(lines, i + 1, divider);
    if (mid == lines.size()) return make_error(which + " has no '=======' line after its SEARCH lines");
    const std::size_t end = next_marker(lines, mid + 1, replace_marker);
    if (end == lines.size()) return make_error(which + " has no '>>>>>>> REPLACE' line after its new lines");
    std::vector<std::string> old_lines(lines.begin() + static_cast<std::ptrdiff_t>(i + 1),
                                       lines.begin() + static_cast<std::ptrdiff_t>(mid));
    std::vector<std::string> new_lines(lines.begin() + static_cast<std::ptrdiff_t>(mid + 1),
                                       lines.begin() + static_cast<std::ptrdiff_t>(end));
    if (old_lines.empty()) return make_error(which + " has an empty SEARCH part: it must quote lines of your code");
    const auto search = join_lines(old_lines, 0, old_lines.size());
    const auto replacement = join_lines(new_lines, 0, new_lines.size());
    auto at = find_lines(code, search);
    if (at != std::string::npos) {
      code.replace(at, search.size(), replacement);
    } else {
      // Trailing whitespace aside, the same lines in a row?
      const auto code_lines = lines_of(code);
      std::size_t found = code_lines.size();
      for (std::size_t s = 0; s + old_lines.size() <= code_lines.size() && found == code_lines.size(); ++s) {
        bool same = true;
        for (std::size_t k = 0; k < old_lines.size() && same; ++k)
          same = rstrip(code_lines[s + k]) == rstrip(old_lines[k]);
        if (same) found = s;
      }
      if (found == code_lines.size())
        return make_error(which + ": its SEARCH lines are not in your previous code (they must be "
                                  "copied exactly, in order)");
      code = join_lines(code_lines, 0, found) + replacement +
             join_lines(code_lines, found + old_lines.size(), code_lines.size());
    }
    i = end + 1;
  }
  if (block == 0) return make_error("the answer has no SEARCH/REPLACE block");
  return code;
}

} // namespace leap::policy
