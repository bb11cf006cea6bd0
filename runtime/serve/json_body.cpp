#include "runtime/serve/json_body.hpp"

#include "runtime/serve/api.hpp"

namespace leap::serve {

using nlohmann::json;

result<json> parse_object(const std::string& body, const std::set<std::string>& allowed,
                          bool empty_is_object) {
  json j;
  try {
    j = body.empty() && empty_is_object ? json::object() : json::parse(body);
  } catch (const json::parse_error& e) {
    return make_error("malformed JSON at byte " + std::to_string(e.byte) + ": "
                      + std::string(e.what()).substr(std::string(e.what()).find(':') + 2));
  }
  if (!j.is_object())
    return make_error("the body must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!allowed.count(it.key()))
      return make_error("unknown field '" + it.key() + "'");
  if (j.contains("schema") && j["schema"] != schema_version)
    return make_error("field schema: this server speaks \"" + std::string(schema_version)
                      + "\", not " + j["schema"].dump());
  return j;
}

} // namespace leap::serve
