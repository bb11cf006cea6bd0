// Request bodies of `leap serve`'s JSON routes (leap's own in api.cpp, OpenEnv's in openenv.cpp):
// the body as a JSON object whose fields are all known, or an error a client can act on (the
// byte where the JSON broke, the unknown field, a "schema" other than this server's). Includes
// nlohmann/json: for those two TUs only, not for headers. Pure; any thread.
#pragma once

#include "common/result.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace leap::serve {

// `allowed`: the body's possible fields; when it has "schema", that field must name
// schema_version (runtime/serve/api.hpp). An empty body is {} when `empty_is_object`.
result<nlohmann::json> parse_object(const std::string& body, const std::set<std::string>& allowed,
                                    bool empty_is_object = false);

} // namespace leap::serve
