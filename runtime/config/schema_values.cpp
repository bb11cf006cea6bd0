// The key registry as the TOML schema of a config file (common/toml_schema.hpp), with the hints
// for a key written in the wrong place, and the --set value parser.
#include "runtime/config/schema.hpp"

#include "common/strings.hpp"

#include <map>
#include <memory>

namespace leap::config {

void registry::build_file_schema() {
  // The sections that have a key of each name, for hints on keys in the wrong place.
  auto owners = std::make_shared<std::map<std::string, std::vector<std::string>>>();
  for (const auto& sec : sections_)
    for (const auto& k : sec.keys)
      (*owners)[k.name].push_back("[" + sec.name + "]");
  auto owners_of = [owners](std::string_view key) {
    auto it = owners->find(std::string(key));
    return it == owners->end() ? std::vector<std::string>() : it->second;
  };
  toml_schema::table_schema root;
  root.table_noun = "section";
  root.unknown_hint = [owners_of](std::string_view key, bool is_table) {
    auto where = owners_of(key);
    if (is_table || where.empty())
      return std::string();
    return "keys go inside a section: put it under " + join(where, " or ");
  };
  for (const auto& sec : sections_) {
    auto& t = root.table(sec.name, sec.doc);
    for (const auto& k : sec.keys)
      t.keys.push_back(k);
    t.unknown_hint = [owners_of](std::string_view key, bool) {
      auto where = owners_of(key);
      if (where.empty())
        return std::string();
      return "'" + std::string(key) + "' is a key of " + join(where, ", ");
    };
  }
  file_schema_ = std::move(root);
}

leap::result<value> parse_override_value(const key_descriptor& d, std::string_view text) {
  return toml_schema::parse_value_text(d, text);
}

} // namespace leap::config
