// TOML loading and --set overrides, driven by the key registry (schema.hpp) through the TOML schema
// checker every reader shares (common/toml_schema.hpp); the rendering is in config_render.cpp, the
// rules across keys in config_checks.cpp.
#include "runtime/config/config.hpp"

#include "common/strings.hpp"
#include "common/toml_schema.hpp"
#include "runtime/config/schema.hpp"

#include <algorithm>
#include <cstdlib>

namespace leap::config {

namespace {

// "x.toml:2:1": where a key was set, for check_consistency's messages.
std::string origin_text(const std::string& source, toml::source_position p) {
  std::string t = toml_schema::position_text(source, p);
  return t.substr(0, t.size() - 2);
}

// The sections that have a key of this name ("compiler", "executor").
std::vector<std::string> sections_with_key(std::string_view key) {
  std::vector<std::string> out;
  for (const auto& s : schema().sections())
    if (s.find(key)) out.push_back(s.name);
  return out;
}

// Checks a parsed file against the registry's schema and applies it; cfg unchanged on error.
leap::result<void> apply_table(leap_config& cfg, const toml::table& root,
                               const std::string& source_name,
                               const std::vector<std::string>& foreign_sections,
                               key_origins* origins) {
  toml_schema::table_schema file = schema().file_schema(); // the sections' schemas are shared
  file.skipped = foreign_sections;
  toml_schema::diagnostics diag(source_name);
  toml_schema::checked_table checked = toml_schema::check(root, file, diag);
  if (!diag.empty()) return diag.error();
  for (const auto& sub : checked.subs) {
    const section_descriptor* sec = schema().find_section(sub.name);
    for (const auto& t : sub.tables)
      for (const auto& k : t.keys) {
        const key_descriptor* d = sec->find(k.name);
        d->set(cfg, k.v);
        if (origins) (*origins)[d->full_name()] = origin_text(source_name, k.key_at);
      }
  }
  return {};
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Public API.

bool operator==(const leap_config& a, const leap_config& b) {
  for (const auto& s : schema().sections())
    for (const auto& k : s.keys)
      if (k.get(a) != k.get(b)) return false;
  return true;
}

leap_config defaults() { return leap_config{}; }

const std::vector<std::string>& generated_family_tags() {
  static const std::vector<std::string> tags = {"ew",   "red",    "bcast",  "softmax", "scan",
                                                "pool", "matmul", "layout", "stencil"};
  return tags;
}

leap::result<family_weight> parse_family_weight(const std::string& entry) {
  const auto& families = generated_family_tags();
  const auto eq = entry.find('=');
  const std::string left = entry.substr(0, eq == std::string::npos ? entry.size() : eq);
  const std::string right = eq == std::string::npos ? std::string() : entry.substr(eq + 1);
  const std::string fam(trim(left)), w(trim(right));
  if (eq == std::string::npos || std::find(families.begin(), families.end(), fam) == families.end())
    return make_error("'" + entry + "' is not family=weight with a family of " + join(families, ", "));
  char* end = nullptr;
  const double v = w.empty() ? 0 : std::strtod(w.c_str(), &end);
  if (end == nullptr || *end != '\0' || !(v > 0) || v > 1000)
    return make_error("'" + entry + "': the weight must be a number in (0, 1000]");
  return family_weight{fam, v};
}

leap::result<void> apply_string(leap_config& cfg, std::string_view toml_text,
                                const std::string& source_name,
                                const std::vector<std::string>& foreign_sections,
                                key_origins* origins) {
  auto parsed = toml_schema::parse(toml_text, source_name);
  if (!parsed) return parsed.err();
  return apply_table(cfg, *parsed, source_name, foreign_sections, origins);
}

leap::result<void> apply_file(leap_config& cfg, const std::string& path,
                              const std::vector<std::string>& foreign_sections,
                              key_origins* origins) {
  auto parsed = toml_schema::parse_file(path, "config file");
  if (!parsed) return parsed.err();
  return apply_table(cfg, *parsed, path, foreign_sections, origins);
}

leap::result<leap_config> load_string(std::string_view toml_text, const std::string& source_name) {
  leap_config cfg = defaults();
  key_origins origins;
  if (auto r = apply_string(cfg, toml_text, source_name, {}, &origins); !r) return r.err();
  if (auto r = check_consistency(cfg, origins); !r) return r.err();
  return cfg;
}

leap::result<leap_config> load_file(const std::string& path) {
  leap_config cfg = defaults();
  key_origins origins;
  if (auto r = apply_file(cfg, path, {}, &origins); !r) return r.err();
  if (auto r = check_consistency(cfg, origins); !r) return r.err();
  return cfg;
}

leap::result<void> apply_override(leap_config& cfg, std::string_view assignment,
                                  key_origins* origins) {
  const std::string prefix = "--set " + std::string(assignment) + ": ";
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos)
    return make_error(prefix + "expected section.key=value (e.g. compiler.workers=4)");
  std::string_view full = trim(assignment.substr(0, eq));
  std::string_view text = assignment.substr(eq + 1);
  auto dot = full.find('.');
  if (dot == std::string_view::npos) {
    std::string msg = prefix + "expected section.key=value";
    auto owners = sections_with_key(full);
    if (!owners.empty()) {
      msg += "; did you mean ";
      for (std::size_t i = 0; i < owners.size(); ++i)
        msg += (i ? " or '" : "'") + owners[i] + "." + std::string(full) + "'";
      msg += "?";
    }
    return make_error(msg);
  }
  const std::string sec_name(full.substr(0, dot));
  const std::string key_name(full.substr(dot + 1));
  const toml_schema::table_schema& file = schema().file_schema();
  const toml_schema::key_path top;
  const section_descriptor* sec = schema().find_section(sec_name);
  if (!sec)
    return make_error(prefix + top.child(sec_name).table() + ": " +
                      toml_schema::unknown_text(file, top, sec_name, true));
  const toml_schema::key_path at = top.child(sec->name);
  const key_descriptor* d = sec->find(key_name);
  if (!d)
    return make_error(prefix + at.key(key_name) + ": " +
                      toml_schema::unknown_text(*file.find_table(sec->name)->schema, at, key_name,
                                                false));
  auto v = parse_override_value(*d, text);
  if (!v) return make_error(prefix + at.key(d->name) + ": " + v.message());
  if (auto issue = toml_schema::check_value(*d, *v))
    return make_error(prefix + at.key(d->name) + ": " + issue->detail);
  d->set(cfg, *v);
  if (origins)
    (*origins)[d->full_name()] = "--set " + std::string(trim(assignment));
  return {};
}

leap::result<std::string> get_value_toml(const leap_config& cfg, std::string_view full_key) {
  auto dot = full_key.find('.');
  const key_descriptor* d = nullptr;
  if (dot != std::string_view::npos)
    d = schema().find_key(full_key.substr(0, dot), full_key.substr(dot + 1));
  if (!d) return make_error("unknown key '" + std::string(full_key) + "'");
  return value_to_toml(d->get(cfg));
}

} // namespace leap::config
