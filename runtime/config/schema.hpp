// leap::config key registry: one descriptor per TOML key (section, name, type, default, doc text,
// validation, member accessor), its rules those of the TOML schemas every reader shares
// (common/toml_schema.hpp). Parsing, --set, to_toml and docs/config.md are all driven by it.
// To add a section: add its struct to config.hpp and a register_<section>() in
// schema_keys_*.cpp (see schema_keys.hpp). Read-only after first use (built once, thread-safe);
// anyone may query it.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/result.hpp"
#include "common/toml_schema.hpp"
#include "runtime/config/config.hpp"

namespace leap::config {

// The key types and values of the shared TOML schemas (common/toml_schema.hpp).
using toml_schema::value;
using toml_schema::value_kind;

// A registered key: its rule (type, bounds, allowed values, doc) plus where it lives in
// leap_config.
struct key_descriptor : toml_schema::key_rule {
  std::string section;
  value default_value; // read from leap_config{} at registration

  // Member accessor. `set` receives a value that passed the key's rules.
  std::function<value(const leap_config&)> get;
  std::function<void(leap_config&, const value&)> set;

  std::string full_name() const { return section + "." + name; }
};

struct section_descriptor {
  std::string name;
  std::string doc;
  std::vector<key_descriptor> keys;

  const key_descriptor* find(std::string_view key) const;
};

class registry {
public:
  // Chainable validation setters for the key just registered (at_least, greater_than, at_most,
  // one_of, non_empty).
  using key_builder = toml_schema::basic_rule_builder<key_descriptor>;

  template <class Section>
  class section_builder {
  public:
    section_builder(registry& r, std::size_t s, Section leap_config::*sec)
        : reg_(r), s_(s), sec_(sec) {}

    // A key backed by a member of type bool, an integer type, double, std::string or
    // std::vector<std::string>. The default is the member's initialiser in leap_config{}.
    template <class M>
    key_builder key(std::string name, M Section::*member, std::string doc);

    // A string key backed by an enum member; `names` maps each accepted string to its value.
    template <class E>
    key_builder key_enum(std::string name, E Section::*member,
                         std::vector<std::pair<std::string, E>> names, std::string doc);

    // A string-list key backed by a std::vector of an enum: each element one of `names`, none
    // twice.
    template <class E>
    key_builder key_enum_list(std::string name, std::vector<E> Section::*member,
                              std::vector<std::pair<std::string, E>> names, std::string doc);

  private:
    key_builder add(key_descriptor d);
    registry& reg_;
    std::size_t s_;
    Section leap_config::*sec_;
  };

  template <class Section>
  section_builder<Section> section(std::string name, Section leap_config::*member,
                                   std::string doc) {
    sections_.push_back(section_descriptor{std::move(name), std::move(doc), {}});
    return section_builder<Section>(*this, sections_.size() - 1, member);
  }

  const std::vector<section_descriptor>& sections() const { return sections_; }
  const section_descriptor* find_section(std::string_view name) const;
  const key_descriptor* find_key(std::string_view section, std::string_view key) const;
  // The registry as the schema of a config file: one table per section (built by schema()).
  const toml_schema::table_schema& file_schema() const { return file_schema_; }
  void build_file_schema();

private:
  std::vector<section_descriptor> sections_;
  toml_schema::table_schema file_schema_;
};

// The registry of every key, in documentation order. Built on first call.
const registry& schema();

// Parses the text of a --set value according to the key's kind (without validation).
leap::result<value> parse_override_value(const key_descriptor& d, std::string_view text);

using toml_schema::closest_match;
using toml_schema::edit_distance;
using toml_schema::kind_name;
using toml_schema::value_to_toml;

// ---- template implementation ----

template <class Section>
registry::key_builder registry::section_builder<Section>::add(key_descriptor d) {
  d.section = reg_.sections_[s_].name;
  const leap_config base; // the member initialisers are the defaults
  d.default_value = d.get(base);
  reg_.sections_[s_].keys.push_back(std::move(d));
  return key_builder(reg_.sections_[s_].keys, reg_.sections_[s_].keys.size() - 1);
}

template <class Section>
template <class M>
registry::key_builder registry::section_builder<Section>::key(std::string name, M Section::*member,
                                                              std::string doc) {
  key_descriptor d;
  d.name = std::move(name);
  d.doc = std::move(doc);
  Section leap_config::*sec = sec_;
  d.get = [sec, member](const leap_config& c) -> value {
    const M& m = c.*sec.*member;
    if constexpr (std::is_same_v<M, bool>) return value(m);
    else if constexpr (std::is_integral_v<M>) return value(static_cast<std::int64_t>(m));
    else if constexpr (std::is_floating_point_v<M>) return value(static_cast<double>(m));
    else return value(m);
  };
  d.set = [sec, member](leap_config& c, const value& v) {
    M& m = c.*sec.*member;
    if constexpr (std::is_same_v<M, bool>) m = std::get<bool>(v);
    else if constexpr (std::is_integral_v<M>) m = static_cast<M>(std::get<std::int64_t>(v));
    else if constexpr (std::is_floating_point_v<M>) m = static_cast<M>(std::get<double>(v));
    else if constexpr (std::is_same_v<M, std::string>) m = std::get<std::string>(v);
    else m = std::get<std::vector<std::string>>(v);
  };
  if constexpr (std::is_same_v<M, bool>) {
    d.kind = value_kind::boolean;
  } else if constexpr (std::is_integral_v<M>) {
    static_assert(sizeof(M) <= sizeof(std::int64_t), "integer keys are at most 64 bits");
    d.kind = value_kind::integer;
    d.repr_min = static_cast<std::int64_t>(std::numeric_limits<M>::min());
    if constexpr (std::is_unsigned_v<M> && sizeof(M) >= sizeof(std::int64_t))
      d.repr_max = std::numeric_limits<std::int64_t>::max();
    else
      d.repr_max = static_cast<std::int64_t>(std::numeric_limits<M>::max());
  } else if constexpr (std::is_floating_point_v<M>) {
    d.kind = value_kind::floating;
  } else if constexpr (std::is_same_v<M, std::string>) {
    d.kind = value_kind::string;
  } else {
    static_assert(std::is_same_v<M, std::vector<std::string>>,
                  "config keys are bool, integers, double, std::string or std::vector<std::string>");
    d.kind = value_kind::string_list;
  }
  return add(std::move(d));
}

template <class Section>
template <class E>
registry::key_builder
registry::section_builder<Section>::key_enum(std::string name, E Section::*member,
                                             std::vector<std::pair<std::string, E>> names,
                                             std::string doc) {
  key_descriptor d;
  d.name = std::move(name);
  d.doc = std::move(doc);
  d.kind = value_kind::string;
  for (const auto& n : names) d.allowed.push_back(n.first);
  Section leap_config::*sec = sec_;
  d.get = [sec, member, names](const leap_config& c) -> value {
    for (const auto& n : names)
      if (n.second == c.*sec.*member) return value(n.first);
    return value(std::string("?"));
  };
  d.set = [sec, member, names](leap_config& c, const value& v) {
    for (const auto& n : names)
      if (n.first == std::get<std::string>(v)) c.*sec.*member = n.second;
  };
  return add(std::move(d));
}

template <class Section>
template <class E>
registry::key_builder
registry::section_builder<Section>::key_enum_list(std::string name, std::vector<E> Section::*member,
                                                  std::vector<std::pair<std::string, E>> names,
                                                  std::string doc) {
  key_descriptor d;
  d.name = std::move(name);
  d.doc = std::move(doc);
  d.kind = value_kind::string_list;
  d.distinct = true;
  for (const auto& n : names) d.allowed.push_back(n.first);
  Section leap_config::*sec = sec_;
  d.get = [sec, member, names](const leap_config& c) -> value {
    std::vector<std::string> out;
    for (const auto& e : c.*sec.*member)
      for (const auto& n : names)
        if (n.second == e) out.push_back(n.first);
    return value(std::move(out));
  };
  d.set = [sec, member, names](leap_config& c, const value& v) {
    std::vector<E> out;
    for (const auto& s : std::get<std::vector<std::string>>(v))
      for (const auto& n : names)
        if (n.first == s) out.push_back(n.second);
    c.*sec.*member = std::move(out);
  };
  return add(std::move(d));
}

} // namespace leap::config
