// Checking a TOML table against its schema (toml_schema.hpp): unknown keys with suggestions,
// missing required keys, values through their rules, sub-tables and arrays of tables recursively;
// the diagnostics' uniform "<file>:<line>:<col>: <key>: <detail>" lines; parsing text and files.
#include "common/toml_schema.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>

namespace leap::toml_schema {

// ---------------------------------------------------------------------------------------------
// Paths and diagnostics.

key_path key_path::child(std::string_view name) const {
  key_path p;
  p.dotted_ = dotted_.empty() ? std::string(name) : dotted_ + "." + std::string(name);
  return p;
}

key_path key_path::element(std::size_t index) const {
  key_path p;
  p.dotted_ = dotted_ + "[" + std::to_string(index) + "]";
  return p;
}

std::string key_path::key(std::string_view name) const {
  return dotted_.empty() ? std::string(name) : "[" + dotted_ + "] " + std::string(name);
}

std::string key_path::table() const {
  return dotted_.empty() ? std::string("the top level") : "[" + dotted_ + "]";
}

std::string position_text(const std::string& source, toml::source_position at) {
  if (at.line == 0) at = {1, 1};
  return source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": ";
}

void diagnostics::add(toml::source_position at, const std::string& key, const std::string& detail) {
  if (at.line == 0) at = {1, 1};
  entries_.push_back({at.line, at.column, position_text(source_, at) + key + ": " + detail});
}

void diagnostics::add_unlocated(const std::string& text) {
  entries_.push_back({0, 0, source_ + ": " + text});
}

std::string diagnostics::text() const {
  auto sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const entry& a, const entry& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  std::vector<std::string> lines;
  for (const auto& e : sorted) lines.push_back(e.text);
  return join(lines, "\n");
}

// ---------------------------------------------------------------------------------------------
// Schemas.

rule_builder table_schema::key(std::string name, value_kind kind, std::string doc) {
  key_rule r;
  r.name = std::move(name);
  r.kind = kind;
  r.doc = std::move(doc);
  keys.push_back(std::move(r));
  return rule_builder(keys, keys.size() - 1);
}

table_schema& table_schema::table(std::string name, std::string doc, bool required) {
  tables.push_back({std::move(name), std::move(doc), false, required, 0,
                    std::make_shared<table_schema>()});
  return *tables.back().schema;
}

table_schema& table_schema::table_array(std::string name, std::string doc,
                                        std::size_t min_elements, bool required) {
  tables.push_back({std::move(name), std::move(doc), true, required || min_elements > 0,
                    min_elements, std::make_shared<table_schema>()});
  return *tables.back().schema;
}

const key_rule* table_schema::find_key(std::string_view name) const {
  for (const auto& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

const table_rule* table_schema::find_table(std::string_view name) const {
  for (const auto& t : tables)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<std::string> table_schema::names() const {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.name);
  for (const auto& t : tables) out.push_back(t.name);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checked tables.

const checked_key* checked_table::find(std::string_view name) const {
  for (const auto& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

const toml::node* checked_table::node(std::string_view name) const {
  return source ? source->get(name) : nullptr;
}

const checked_table* checked_table::table(std::string_view name) const {
  for (const auto& s : subs)
    if (s.name == name && s.tables.size() == 1 && s.node && s.node->is_table()) return &s.tables[0];
  return nullptr;
}

const std::vector<checked_table>& checked_table::array(std::string_view name) const {
  static const std::vector<checked_table> none;
  for (const auto& s : subs)
    if (s.name == name && s.node && s.node->is_array()) return s.tables;
  return none;
}

toml::source_position checked_table::position() const {
  return source ? source->source().begin : toml::source_position{1, 1};
}

// ---------------------------------------------------------------------------------------------
// check().

namespace {

toml::source_position key_position(const toml::key& k, const toml::node& n) {
  auto p = k.source().begin;
  return p.line ? p : n.source().begin;
}

bool is_table_array(const toml::node& n) {
  const toml::array* a = n.as_array();
  return a && !a->empty() && a->is_array_of_tables();
}

// "[bench.compile]" / "[[bench.tasks]]" / "[bench] seed": how an entry of `path` is shown.
std::string shown_entry(const key_path& path, const table_schema& s, const std::string& name) {
  if (const table_rule* t = s.find_table(name))
    return t->array ? "[[" + path.child(name).dotted() + "]]" : path.child(name).table();
  return "'" + name + "'";
}

} // namespace

std::string unknown_text(const table_schema& s, const key_path& path, const std::string& name,
                         bool is_table) {
  std::string msg = "unknown " + (is_table ? s.table_noun : std::string("key"));
  const auto names = s.names();
  if (auto m = closest_match(name, names))
    msg += "; did you mean " + shown_entry(path, s, *m) + "?";
  // A hint says more than the list of known keys: it replaces it.
  if (s.unknown_hint)
    if (std::string hint = s.unknown_hint(name, is_table); !hint.empty()) return msg + "; " + hint;
  if (msg.back() == '?') return msg;
  if (names.empty()) return msg + "; " + path.table() + " takes no keys";
  const bool only_tables = s.keys.empty();
  return msg + "; known " + (only_tables ? s.table_noun + "s" : std::string("keys")) + ": " +
         join(names, ", ");
}

namespace {

std::string doc_suffix(const std::string& doc) {
  return doc.empty() ? std::string() : " (" + doc + ")";
}

void check_value_key(const key_rule& r, const std::string& name, const toml::key& k,
                     const toml::node& n, const key_path& path, diagnostics& diag,
                     checked_table& out) {
  // A list element's problem is reported at the element.
  auto at = [&](const std::optional<std::size_t>& element) -> const toml::node& {
    const toml::array* arr = n.as_array();
    return element && arr && *element < arr->size() ? *arr->get(*element) : n;
  };
  auto c = convert(r, n);
  if (auto* issue = std::get_if<value_issue>(&c)) {
    diag.add(at(issue->element), path.key(name), issue->detail);
    return;
  }
  value& v = std::get<value>(c);
  if (auto issue = check_value(r, v)) {
    diag.add(at(issue->element), path.key(name), issue->detail);
    return;
  }
  out.keys.push_back({name, std::move(v), &n, key_position(k, n)});
}

void check_sub(const table_rule& r, const std::string& name, const toml::node& n,
               const key_path& path, diagnostics& diag, checked_table& out) {
  checked_table::sub s{name, &n, {}};
  const key_path inner = path.child(name);
  if (!r.array) {
    if (const toml::table* t = n.as_table())
      s.tables.push_back(check(*t, *r.schema, diag, inner));
    else
      diag.add(n, path.key(name),
               "expected a table (" + inner.table() + "), got " + describe_node(n));
  } else if (const toml::array* arr = n.as_array()) {
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& el = *arr->get(i);
      if (const toml::table* t = el.as_table())
        s.tables.push_back(check(*t, *r.schema, diag, inner.element(i)));
      else
        diag.add(el, path.key(name), "element [" + std::to_string(i) + "]: expected a table, got " +
                                         describe_node(el));
    }
    if (arr->size() < r.min_elements)
      diag.add(n, path.key(name),
               "expected at least " + std::to_string(r.min_elements) + " [[" + inner.dotted() +
                   "]] tables, got " + std::to_string(arr->size()) + doc_suffix(r.doc));
  } else {
    diag.add(n, path.key(name),
             "expected an array of tables ([[" + inner.dotted() + "]]), got " + describe_node(n));
  }
  out.subs.push_back(std::move(s));
}

} // namespace

checked_table check(const toml::table& t, const table_schema& schema, diagnostics& diag,
                    const key_path& path) {
  checked_table out;
  out.source = &t;
  out.path = path;
  for (auto&& [k, n] : t) {
    const std::string name(k.str());
    if (std::find(schema.skipped.begin(), schema.skipped.end(), name) != schema.skipped.end())
      continue;
    if (const key_rule* r = schema.find_key(name))
      check_value_key(*r, name, k, n, path, diag, out);
    else if (const table_rule* tr = schema.find_table(name))
      check_sub(*tr, name, n, path, diag, out);
    else if (!schema.open)
      diag.add(key_position(k, n), n.is_table()         ? path.child(name).table()
                                   : is_table_array(n) ? "[[" + path.child(name).dotted() + "]]"
                                                       : path.key(name),
               unknown_text(schema, path, name, n.is_table() || is_table_array(n)));
  }
  const auto here = t.source().begin;
  for (const auto& r : schema.keys)
    if (r.required && !t.contains(r.name))
      diag.add(here, path.key(r.name), "missing required key" + doc_suffix(r.doc));
  for (const auto& r : schema.tables)
    if (r.required && !t.contains(r.name))
      diag.add(here, path.key(r.name),
               std::string("missing required ") + (r.array ? "array of tables [[" : "table [") +
                   path.child(r.name).dotted() + (r.array ? "]]" : "]") + doc_suffix(r.doc));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing.

leap::result<toml::table> parse(std::string_view text, const std::string& source) {
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, std::string_view(source));
  } catch (const toml::parse_error& e) {
    return make_error(position_text(source, e.source().begin) + "TOML syntax error: " +
                      std::string(e.description()));
  }
#else
  toml::parse_result r = toml::parse(text, std::string_view(source));
  if (!r)
    return make_error(position_text(source, r.error().source().begin) + "TOML syntax error: " +
                      std::string(r.error().description()));
  return std::move(r).table();
#endif
}

leap::result<toml::table> parse_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(path + ": cannot open " + std::string(what) + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return make_error(path + ": cannot read " + std::string(what) + ": " + std::strerror(errno));
  return parse(text.str(), path);
}

} // namespace leap::toml_schema
