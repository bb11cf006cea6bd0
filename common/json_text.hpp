// JSON text from untrusted strings (model output, compiler diagnostics echoing it): invalid
// UTF-8 is replaced by U+FFFD instead of throwing. Header-only; any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace leap {

inline std::string dump_lossy(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace leap
