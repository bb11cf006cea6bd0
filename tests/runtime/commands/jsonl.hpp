// Test helper: reads a JSON-lines file (metrics.jsonl, groups.jsonl) into objects; a missing
// file reads as none. Test code only.
#pragma once

#include "common/fs.hpp"
#include "common/strings.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace leap::test {

inline std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> out;
  auto text = read_file(path);
  if (!text)
    return out;
  for (auto& line : split_lines(*text))
    if (!trim(line).empty())
      out.push_back(nlohmann::json::parse(line));
  return out;
}

} // namespace leap::test
