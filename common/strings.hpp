// Small string helpers (trim, split, join, JSON-free escaping for messages). Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leap {

std::string_view trim(std::string_view s);
std::vector<std::string> split_lines(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
// Replaces every occurrence of `from` in `s` by `to`.
std::string replace_all(std::string s, std::string_view from, std::string_view to);
// Quotes an argument for display in a shell-like command line (for error messages only).
std::string shell_quote(std::string_view arg);
// Formats seconds with 3 significant decimals ("0.412").
std::string format_seconds(double s);
// Formats a number with a fixed count of decimals: format_fixed(0.4123, 2) == "0.41".
std::string format_fixed(double v, int decimals);
// Escapes &, <, >, " and ' for XML/HTML text and attribute values (SVG, HTML pages).
std::string escape_xml(std::string_view s);

} // namespace leap
