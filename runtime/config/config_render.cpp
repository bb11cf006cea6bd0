// The configuration rendered from the key registry (schema.hpp): as TOML (`leap config show`,
// configs/default.toml) and as docs/config.md.
#include "runtime/config/config.hpp"

#include "runtime/config/schema.hpp"

#include <sstream>
#include <string>
#include <string_view>

namespace leap::config {

namespace {

std::string describe_for_docs_type(const key_descriptor& d) {
  std::string t;
  if (d.kind == value_kind::string && !d.allowed.empty()) {
    t = "one of ";
    for (std::size_t i = 0; i < d.allowed.size(); ++i)
      t += (i ? ", `" : "`") + d.allowed[i] + "`";
    return t;
  }
  if (d.kind == value_kind::string_list && !d.allowed.empty()) {
    t = "list of distinct ";
    for (std::size_t i = 0; i < d.allowed.size(); ++i)
      t += (i ? ", `" : "`") + d.allowed[i] + "`";
    return t;
  }
  t = kind_name(d.kind);
  if (d.non_empty) t = "non-empty " + t;
  auto num = [](double x) {
    std::string s = value_to_toml(value(x));
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s;
  };
  if (d.min && d.max)
    t += (d.min_exclusive ? " in (" : " in [") + num(*d.min) + ", " + num(*d.max) + "]";
  else if (d.min)
    t += (d.min_exclusive ? " > " : " >= ") + num(*d.min);
  else if (d.max)
    t += " <= " + num(*d.max);
  return t;
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// Wraps text into "# " comment lines of at most ~width characters.
std::string comment_lines(std::string_view text, std::size_t width = 98) {
  std::string out, line;
  std::istringstream words{std::string(text)};
  std::string w;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out += "# " + line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += w;
  }
  if (!line.empty()) out += "# " + line + "\n";
  return out;
}

} // namespace

std::string to_toml(const leap_config& cfg) { return to_toml(cfg, false); }

std::string to_toml(const leap_config& cfg, bool comments) {
  std::string out;
  bool first = true;
  for (const auto& s : schema().sections()) {
    if (!first) out += "\n";
    first = false;
    if (comments) out += comment_lines(s.doc);
    out += "[" + s.name + "]\n";
    for (const auto& k : s.keys) {
      if (comments) out += comment_lines(k.doc + " (" + describe_for_docs_type(k) + ")");
      out += k.name + " = " + value_to_toml(k.get(cfg)) + "\n";
    }
  }
  return out;
}

std::string render_docs_markdown() {
  std::string out;
  out += "# Configuration reference\n\n";
  out += "<!-- Generated from the key registry (runtime/config/schema_keys_*.cpp) by "
         "leap::config::render_docs_markdown(); do not edit by hand. Regenerate with "
         "`LEAP_UPDATE_DOCS=1 build/tests/runtime/config/test_runtime_config`. -->\n\n";
  out += "leap reads its settings from a TOML file: `configs/default.toml` lists every key with "
         "its default, `configs/quickstart.toml` is a small setup for a first run. Every key is "
         "optional; a key left out keeps its default. Unknown sections, unknown keys, values of "
         "the wrong type and values out of range are errors that name the file, line, column and "
         "key, with the closest known key when it looks like a typo, so a misspelt setting never "
         "passes silently:\n\n"
         "```\n"
         "configs/x.toml:12:1: [train] stpes: unknown key; did you mean 'steps'?\n"
         "configs/x.toml:13:14: [train] group_size: must be at least 2 (got 1)\n"
         "```\n\n"
         "Every problem of a file is reported, in file order. The other TOML files leap reads "
         "(tasks' `task.toml`, `leap bench` scenarios, `leap experiment` specs) are checked the "
         "same way and their errors read the same.\n\n";
  out += "Any key can be overridden on the command line with `--set section.key=value`, applied "
         "after the file, in order. The value is read according to the key's type: integers "
         "(`--set executor.trials=4`), floats (`--set executor.timeout_seconds=10`), booleans "
         "(`true` / `false`), strings with or without quotes (`--set compiler.arch=sm_80`), and "
         "string lists as TOML arrays (`--set 'compiler.nvcc_flags=[\"-O3\",\"-g\"]'`). A float "
         "key also accepts an integer.\n";
  for (const auto& s : schema().sections()) {
    out += "\n## [" + s.name + "]\n\n";
    out += s.doc + "\n\n";
    out += "| key | type | default | meaning |\n";
    out += "|---|---|---|---|\n";
    for (const auto& k : s.keys) {
      out += "| `" + k.name + "` | " + md_cell(describe_for_docs_type(k)) + " | `" +
             md_cell(value_to_toml(k.default_value)) + "` | " + md_cell(k.doc) + " |\n";
    }
  }
  return out;
}

} // namespace leap::config
