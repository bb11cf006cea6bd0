// TOML loading and --set overrides, driven by the key registry (schema.hpp); the rendering is in
// config_render.cpp, the rules across keys in config_checks.cpp.
#include "runtime/config/config.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>

#include <toml++/toml.h>

#include "runtime/config/schema.hpp"

namespace leap::config {

namespace {

// ---------------------------------------------------------------------------------------------
// Small text helpers.

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::vector<std::string> key_names(const section_descriptor& s) {
  std::vector<std::string> names;
  for (const auto& k : s.keys) names.push_back(k.name);
  return names;
}

std::vector<std::string> section_names() {
  std::vector<std::string> names;
  for (const auto& s : schema().sections()) names.push_back(s.name);
  return names;
}

std::string known_sections_text() { return "known sections: " + join(section_names(), ", "); }

// Sections that have a key of this name, as "[compiler] workers" etc.
std::vector<std::string> sections_with_key(std::string_view key) {
  std::vector<std::string> out;
  for (const auto& s : schema().sections())
    if (s.find(key)) out.push_back(s.name);
  return out;
}

std::string unknown_section_text(std::string_view name) {
  std::string msg = "unknown section [" + std::string(name) + "]";
  if (auto m = closest_match(name, section_names())) msg += "; did you mean [" + *m + "]?";
  return msg + " (" + known_sections_text() + ")";
}

std::string unknown_key_text(const section_descriptor& s, std::string_view key) {
  std::string msg = "unknown key '" + s.name + "." + std::string(key) + "'";
  if (auto m = closest_match(key, key_names(s))) msg += "; did you mean '" + s.name + "." + *m + "'?";
  auto elsewhere = sections_with_key(key);
  if (!elsewhere.empty()) {
    msg += " ('" + std::string(key) + "' is a key of ";
    for (std::size_t i = 0; i < elsewhere.size(); ++i)
      msg += (i ? ", [" : "[") + elsewhere[i] + "]";
    msg += ")";
  }
  return msg + " (known keys in [" + s.name + "]: " + join(key_names(s), ", ") + ")";
}

std::string expected_text(value_kind k) {
  switch (k) {
  case value_kind::boolean: return "expected a boolean (true or false)";
  case value_kind::integer: return "expected an integer";
  case value_kind::floating: return "expected a number";
  case value_kind::string: return "expected a string";
  case value_kind::string_list: return "expected an array of strings such as [\"-O3\", \"-g\"]";
  }
  return "expected ?";
}

std::string describe_node(const toml::node& n) {
  switch (n.type()) {
  case toml::node_type::string: return "a string (" + value_to_toml(value(std::string(*n.value<std::string>()))) + ")";
  case toml::node_type::integer: return "an integer (" + std::to_string(*n.value<std::int64_t>()) + ")";
  case toml::node_type::floating_point: return "a float (" + value_to_toml(value(*n.value<double>())) + ")";
  case toml::node_type::boolean: return std::string("a boolean (") + (*n.value<bool>() ? "true" : "false") + ")";
  case toml::node_type::array: return "an array";
  case toml::node_type::table: return "a table";
  case toml::node_type::date: return "a date";
  case toml::node_type::time: return "a time";
  case toml::node_type::date_time: return "a date-time";
  case toml::node_type::none: break;
  }
  return "nothing";
}

// ---------------------------------------------------------------------------------------------
// TOML node -> value.

struct located_error {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::string message;
};

struct conversion_error {
  toml::source_position where;
  std::string detail;
};

using conversion = std::variant<value, conversion_error>;

conversion convert_node(const key_descriptor& d, const toml::node& n) {
  auto wrong = [&](const toml::node& bad, std::string detail) -> conversion {
    return conversion_error{bad.source().begin, std::move(detail)};
  };
  switch (d.kind) {
  case value_kind::boolean:
    if (auto b = n.value_exact<bool>()) return value(*b);
    break;
  case value_kind::integer:
    if (n.is_integer()) return value(*n.value_exact<std::int64_t>());
    break;
  case value_kind::floating:
    if (n.is_floating_point()) return value(*n.value_exact<double>());
    if (n.is_integer()) return value(static_cast<double>(*n.value_exact<std::int64_t>()));
    break;
  case value_kind::string:
    if (n.is_string()) return value(std::string(*n.value_exact<std::string>()));
    break;
  case value_kind::string_list:
    if (const toml::array* arr = n.as_array()) {
      std::vector<std::string> out;
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::node& el = *arr->get(i);
        if (!el.is_string())
          return wrong(el, "element [" + std::to_string(i) + "]: expected a string, got " +
                               describe_node(el));
        out.push_back(std::string(*el.value_exact<std::string>()));
      }
      return value(std::move(out));
    }
    break;
  }
  return wrong(n, expected_text(d.kind) + ", got " + describe_node(n));
}

std::string position_prefix(const std::string& source, std::uint32_t line, std::uint32_t col) {
  return source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
}

// Parses TOML text; a syntax error becomes "<source>:<line>:<col>: TOML syntax error: <text>".
leap::result<toml::table> parse_toml(std::string_view text, const std::string& source_name) {
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    auto b = e.source().begin;
    return make_error(position_prefix(source_name, b.line, b.column) +
                      "TOML syntax error: " + std::string(e.description()));
  }
#else
  toml::parse_result r = toml::parse(text, source_name);
  if (!r) {
    auto b = r.error().source().begin;
    return make_error(position_prefix(source_name, b.line, b.column) +
                      "TOML syntax error: " + std::string(r.error().description()));
  }
  return std::move(r).table();
#endif
}

toml::source_position key_position(const toml::key& k, const toml::node& n) {
  auto p = k.source().begin;
  return p.line ? p : n.source().begin;
}

void apply_section(leap_config& work, const section_descriptor& sec, const toml::table& tbl,
                   std::vector<located_error>& errs, const std::string& source_name,
                   key_origins& origins) {
  for (auto&& [k, node] : tbl) {
    const key_descriptor* d = sec.find(k.str());
    if (!d) {
      auto p = key_position(k, node);
      errs.push_back({p.line, p.column, unknown_key_text(sec, k.str())});
      continue;
    }
    conversion c = convert_node(*d, node);
    if (auto* e = std::get_if<conversion_error>(&c)) {
      errs.push_back({e->where.line, e->where.column, d->full_name() + ": " + e->detail});
      continue;
    }
    const value& v = std::get<value>(c);
    if (auto ok = check_value(*d, v); !ok) {
      auto p = node.source().begin;
      errs.push_back({p.line, p.column, d->full_name() + ": " + ok.message()});
      continue;
    }
    d->set(work, v);
    auto p = key_position(k, node);
    origins[d->full_name()] =
      source_name + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
  }
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

leap::result<void> apply_string(leap_config& cfg, std::string_view toml_text,
                                const std::string& source_name,
                                const std::vector<std::string>& foreign_sections,
                                key_origins* origins) {
  auto parsed = parse_toml(toml_text, source_name);
  if (!parsed) return parsed.err();
  const toml::table& root = *parsed;

  leap_config work = cfg;
  key_origins set_here;
  std::vector<located_error> errs;
  for (auto&& [k, node] : root) {
    if (std::find(foreign_sections.begin(), foreign_sections.end(), k.str()) != foreign_sections.end())
      continue;
    auto p = key_position(k, node);
    const section_descriptor* sec = schema().find_section(k.str());
    if (!sec) {
      auto owners = sections_with_key(k.str());
      if (!node.is_table() && !owners.empty()) {
        std::string where;
        for (std::size_t i = 0; i < owners.size(); ++i)
          where += (i ? " or [" : "[") + owners[i] + "]";
        errs.push_back({p.line, p.column,
                        "key '" + std::string(k.str()) +
                            "' must be inside a section: put it under " + where});
      } else if (!node.is_table()) {
        errs.push_back({p.line, p.column,
                        "unknown key '" + std::string(k.str()) + "' outside any section (" +
                            known_sections_text() + ")"});
      } else {
        errs.push_back({p.line, p.column, unknown_section_text(k.str())});
      }
      continue;
    }
    const toml::table* tbl = node.as_table();
    if (!tbl) {
      auto np = node.source().begin;
      errs.push_back({np.line, np.column,
                      "'" + sec->name + "' must be a table (a [" + sec->name + "] section), got " +
                          describe_node(node)});
      continue;
    }
    apply_section(work, *sec, *tbl, errs, source_name, set_here);
  }
  if (!errs.empty()) {
    std::stable_sort(errs.begin(), errs.end(), [](const located_error& a, const located_error& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    std::vector<std::string> lines;
    for (const auto& e : errs) lines.push_back(position_prefix(source_name, e.line, e.column) + e.message);
    return make_error(join(lines, "\n"));
  }
  cfg = std::move(work);
  if (origins)
    for (auto& [k, where] : set_here)
      (*origins)[k] = where;
  return {};
}

leap::result<void> apply_file(leap_config& cfg, const std::string& path,
                              const std::vector<std::string>& foreign_sections,
                              key_origins* origins) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open config file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error(path + ": cannot read config file: " + std::strerror(errno));
  return apply_string(cfg, text.str(), path, foreign_sections, origins);
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

leap::result<value> parse_override_value(const key_descriptor& d, std::string_view raw) {
  std::string_view text = trim(raw);
  if (d.kind == value_kind::string && (text.empty() || (text.front() != '"' && text.front() != '\'')))
    return value(std::string(text)); // unquoted string: taken literally
  auto shown = [&]() -> std::string {
    return text.empty() ? std::string("nothing") : "'" + std::string(text) + "'";
  };
  if (d.kind == value_kind::string_list && (text.empty() || text.front() != '['))
    return make_error(expected_text(d.kind) + ", got " + shown());
  std::string doc = "v = " + std::string(text);
  leap::result<toml::table> parsed = [&]() -> leap::result<toml::table> {
#if TOML_EXCEPTIONS
    try {
      return toml::parse(doc);
    } catch (const toml::parse_error& e) {
      return make_error(std::string(e.description()));
    }
#else
    toml::parse_result r = toml::parse(doc);
    if (!r) return make_error(std::string(r.error().description()));
    return std::move(r).table();
#endif
  }();
  if (!parsed || parsed->size() != 1 || !parsed->contains("v")) {
    if (d.kind == value_kind::string || d.kind == value_kind::string_list)
      return make_error(expected_text(d.kind) + ", got " + shown() +
                        (parsed ? std::string() : " (" + parsed.message() + ")"));
    return make_error(expected_text(d.kind) + ", got " + shown());
  }
  conversion c = convert_node(d, *parsed->get("v"));
  if (auto* e = std::get_if<conversion_error>(&c)) return make_error(e->detail);
  return std::get<value>(std::move(c));
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
  std::string_view sec_name = full.substr(0, dot);
  std::string_view key_name = full.substr(dot + 1);
  const section_descriptor* sec = schema().find_section(sec_name);
  if (!sec) return make_error(prefix + unknown_section_text(sec_name));
  const key_descriptor* d = sec->find(key_name);
  if (!d) return make_error(prefix + unknown_key_text(*sec, key_name));
  auto v = parse_override_value(*d, text);
  if (!v) return make_error(prefix + v.message());
  if (auto ok = check_value(*d, *v); !ok) return make_error(prefix + ok.message());
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
