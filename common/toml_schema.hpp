// leap::toml_schema: one way to read every TOML file leap reads (the run config, experiment specs,
// bench scenarios, task.toml). A table_schema declares a table's keys (type, range, allowed values,
// required or not) and its sub-tables and arrays of tables; check() validates a parsed table
// against it, collecting every problem in a diagnostics list, and returns the values that passed.
// Every error reads "<file>:<line>:<column>: <key>: <what is wrong>", the key written as
// "[train] steps" (a key of a table), "level" (a key at the top level) or "[args[1]] role" (a key
// of the second [[args]] table); an unknown key names the closest known one or lists them all.
// The readers add their own rules across keys through the same diagnostics.
// No CAF, no LibTorch (toml++ only). Schemas are plain values: build them once (a function-local
// static) and share them read-only across threads; diagnostics and checked tables belong to the
// one call that reads a file.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <toml++/toml.h>

#include "common/result.hpp"

namespace leap::toml_schema {

// ---- values ----

enum class value_kind { boolean, integer, floating, string, string_list, integer_list, float_list };

// A dynamically typed key value; the alternative's index is the value_kind's.
using value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>,
                           std::vector<std::int64_t>, std::vector<double>>;

// One key: its name, type and rules. Builders below fill it; readers rarely touch it directly.
struct key_rule {
  std::string name;
  value_kind kind = value_kind::string;
  std::string doc;   // for generated docs and for "missing required key" messages
  bool required = false;
  // `allowed` (strings and string lists' elements): the accepted values, empty = any.
  std::vector<std::string> allowed;
  // Bounds of numbers (and of number lists' elements); min_exclusive turns min into a strict bound.
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
  bool non_empty = false; // strings and lists
  bool distinct = false;  // lists: no element twice
  // What the destination can hold (integers); checked besides min/max, not documented.
  std::int64_t repr_min = std::numeric_limits<std::int64_t>::min();
  std::int64_t repr_max = std::numeric_limits<std::int64_t>::max();
  // A second shape the key may take (an experiment's seeds: a list, or a count): a value of this
  // rule's kind is read and checked by it instead. Its name and doc are the key's.
  std::shared_ptr<const key_rule> alternative;
};

// Chainable rule setters for a key just declared (held by index: safe while more keys are added).
template <class Rule>
class basic_rule_builder {
public:
  basic_rule_builder(std::vector<Rule>& rules, std::size_t index) : rules_(rules), i_(index) {}
  basic_rule_builder& at_least(double v) {
    r().min = v;
    r().min_exclusive = false;
    return *this;
  }
  basic_rule_builder& greater_than(double v) {
    r().min = v;
    r().min_exclusive = true;
    return *this;
  }
  basic_rule_builder& at_most(double v) {
    r().max = v;
    return *this;
  }
  basic_rule_builder& one_of(std::vector<std::string> v) {
    r().allowed = std::move(v);
    return *this;
  }
  basic_rule_builder& non_empty() {
    r().non_empty = true;
    return *this;
  }
  basic_rule_builder& distinct() {
    r().distinct = true;
    return *this;
  }
  basic_rule_builder& required() {
    r().required = true;
    return *this;
  }
  // The key may also be a `kind` value checked by `rules` (bounds, allowed values, ...).
  basic_rule_builder& or_else(value_kind kind, key_rule rules = {}) {
    rules.kind = kind;
    rules.name = r().name;
    r().alternative = std::make_shared<const key_rule>(std::move(rules));
    return *this;
  }
  // The integer range of the destination type (an `int` key refuses 2^40).
  template <class Int>
  basic_rule_builder& fits() {
    r().repr_min = static_cast<std::int64_t>(std::numeric_limits<Int>::min());
    r().repr_max = sizeof(Int) >= sizeof(std::int64_t)
                       ? std::numeric_limits<std::int64_t>::max()
                       : static_cast<std::int64_t>(std::numeric_limits<Int>::max());
    return *this;
  }

private:
  key_rule& r() { return rules_[i_]; }
  std::vector<Rule>& rules_;
  std::size_t i_;
};
using rule_builder = basic_rule_builder<key_rule>;

// "integer", "float", "boolean", "string", "string list", "integer list", "float list".
std::string kind_name(value_kind k);
// TOML literal of a value: 2, 30.0, "sm_90", ["-O3", "-std=c++17"].
std::string value_to_toml(const value& v);
// A bound as written in messages and docs: 1, 0.5 (no trailing ".0").
std::string number_text(double d);
// What a node holds, for "got ..." in messages: a string ("abc"), an integer (3), a table, ...
std::string describe_node(const toml::node& n);

// A value that breaks a rule: the detail without position or key ("must be at least 1 (got 0)");
// `element` is the offending list element's index, when one element is.
struct value_issue {
  std::string detail;
  std::optional<std::size_t> element;
};
// The node as the key's kind (an integer is accepted for a float; lists element by element), or
// the issue ("expected an integer, got a string (\"abc\")"). No range checks.
std::variant<value, value_issue> convert(const key_rule& rule, const toml::node& n);
// The rules on a value of the key's kind: range, allowed values, non-empty, distinct.
std::optional<value_issue> check_value(const key_rule& rule, const value& v);
// Reads a value written on a command line ("4", "sm_80" or "\"sm_80\"", "[\"-O3\",\"-g\"]"):
// TOML syntax, except that a string may go unquoted. No range checks.
leap::result<value> parse_value_text(const key_rule& rule, std::string_view text);
// "expected an integer", "expected an array of strings such as [\"-O3\", \"-g\"]", ... (with a
// rule's alternative: "expected an array of integers such as [1, 2] or an integer").
std::string expected_text(value_kind k);
std::string expected_text(const key_rule& rule);

// Levenshtein distance (with adjacent swaps), for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// ---- where a key is ----

// A table's place in a document: "" (the top level), "train", "bench.tasks[2]".
class key_path {
public:
  key_path() = default;
  key_path child(std::string_view name) const;  // a sub-table
  key_path element(std::size_t index) const;    // element `index` of the array this path names
  bool is_root() const { return dotted_.empty(); }
  const std::string& dotted() const { return dotted_; }
  // How a key of this table is named in messages: "[train] steps", or "steps" at the top level.
  std::string key(std::string_view name) const;
  // The table itself: "[train]" ("the top level" for the root).
  std::string table() const;

private:
  std::string dotted_;
};

// The errors of one file, each "<source>:<line>:<col>: <key>: <detail>"; text() puts them in file
// order, one per line (those without a position first).
class diagnostics {
public:
  explicit diagnostics(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }
  void add(toml::source_position at, const std::string& key, const std::string& detail);
  void add(const toml::node& at, const std::string& key, const std::string& detail) {
    add(at.source().begin, key, detail);
  }
  // An error about the file as a whole (no line): "<source>: <text>".
  void add_unlocated(const std::string& text);
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  std::string text() const;
  leap::error error() const { return make_error(text()); }

private:
  struct entry {
    std::uint32_t line, column;
    std::string text;
  };
  std::string source_;
  std::vector<entry> entries_;
};

// "<source>:<line>:<col>: " of a position (line 0 counts as 1:1).
std::string position_text(const std::string& source, toml::source_position at);

// ---- tables ----

struct table_schema;

// A sub-table ([name]) or an array of tables ([[name]]) inside a table.
struct table_rule {
  std::string name;
  std::string doc;
  bool array = false;
  bool required = false;
  std::size_t min_elements = 0; // arrays
  std::shared_ptr<table_schema> schema;
};

struct table_schema {
  std::vector<key_rule> keys;
  std::vector<table_rule> tables;
  // Keys another reader owns (e.g. [bench] in a scenario, read by the config loader too): skipped.
  std::vector<std::string> skipped;
  // Keys not declared here are accepted and not read: another reader owns them (a scenario's
  // config sections), or the caller checks the table again with a schema of its own ([[args]],
  // whose keys depend on the task's signature). Declared keys are still checked.
  bool open = false;
  // What this table's sub-tables are called in messages: "table", or "section" in the config.
  std::string table_noun = "table";
  // Extra text for an unknown key (the config: "'seed' is a key of [executor], [sft]"), given
  // instead of the list of known keys; "" = none.
  // `is_table`: the unknown entry is a table or an array of tables.
  std::function<std::string(std::string_view key, bool is_table)> unknown_hint;

  // A key. Integer keys take fits<int>() etc. from the caller when narrower than 64 bits.
  rule_builder key(std::string name, value_kind kind, std::string doc = {});
  // A sub-table [name] / an array of tables [[name]]; returns its schema to fill.
  table_schema& table(std::string name, std::string doc = {}, bool required = false);
  table_schema& table_array(std::string name, std::string doc = {}, std::size_t min_elements = 0,
                            bool required = false);

  const key_rule* find_key(std::string_view name) const;
  const table_rule* find_table(std::string_view name) const;
  // Keys then tables, in declaration order.
  std::vector<std::string> names() const;
};

// A key that passed its rules.
struct checked_key {
  std::string name;
  value v;
  const toml::node* node = nullptr; // the value, for positions of later errors
  toml::source_position key_at;     // the key itself
};

// What check() read from one table: the values that passed, the sub-tables and arrays of tables.
class checked_table {
public:
  struct sub {
    std::string name;
    const toml::node* node = nullptr;
    std::vector<checked_table> tables; // one for a sub-table, the elements for an array
  };

  const toml::table* source = nullptr;
  key_path path;
  std::vector<checked_key> keys; // in toml++'s order (by name); positions give the file's
  std::vector<sub> subs;

  const checked_key* find(std::string_view name) const;
  template <class T>
  std::optional<T> get(std::string_view name) const {
    const checked_key* k = find(name);
    if (!k) return std::nullopt;
    if (const T* v = std::get_if<T>(&k->v)) return *v;
    return std::nullopt;
  }
  template <class T>
  void read(std::string_view name, T& out) const {
    if (auto v = get<T>(name)) out = *v;
  }
  // The key's node even when its value failed (nullptr when absent).
  const toml::node* node(std::string_view name) const;
  // A sub-table (nullptr when absent or broken) / an array's elements (empty when absent).
  const checked_table* table(std::string_view name) const;
  const std::vector<checked_table>& array(std::string_view name) const;
  toml::source_position position() const;
};

// The detail for an unknown key `name` of the table at `path` ("unknown key; did you mean
// 'workers'?" or "unknown section; known sections: a, b"), also for callers that find one
// elsewhere (a --set).
std::string unknown_text(const table_schema& schema, const key_path& path, const std::string& name,
                         bool is_table);

// Validates `t` against `schema`: unknown keys, missing required ones, types, ranges, allowed
// values, sub-tables recursively. Problems go to `diag`; the result holds what passed.
checked_table check(const toml::table& t, const table_schema& schema, diagnostics& diag,
                    const key_path& path = {});

// Parses TOML text; a syntax error reads "<source>:<line>:<col>: TOML syntax error: <what>".
leap::result<toml::table> parse(std::string_view text, const std::string& source);
// Reads and parses a file ("<path>: cannot open <what>: <reason>" when it cannot be read).
leap::result<toml::table> parse_file(const std::string& path, std::string_view what = "file");

} // namespace leap::toml_schema
