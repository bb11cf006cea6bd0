// The verdict cache of corpus labelling: see label_cache.hpp.
#include "runtime/workflows/label_cache.hpp"

#include "common/fs.hpp"
#include "common/json_text.hpp"
#include "common/sha256.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace leap::runtime {

namespace fs = std::filesystem;

namespace {

std::string label_checksum(nlohmann::json j) {
  j.erase("sha256");
  return sha256_hex(dump_lossy(j));
}

} // namespace

label_read read_cached_label(const std::string& path, cached_label& l, std::string& problem) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return label_read::miss;
  auto damaged = [&](const std::string& why) {
    problem = path + ": " + why;
    fs::remove(path, ec);
    return label_read::repaired;
  };
  auto text = read_file(path);
  if (!text)
    return damaged(text.message());
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return damaged("not a JSON object (torn or damaged)");
  if (j.contains("sha256") && (!j["sha256"].is_string() || j["sha256"] != label_checksum(j)))
    return damaged("checksum mismatch (damaged)");
  try {
    if (!env::parse_status(j.value("status", ""), l.st))
      return damaged("unknown status");
    l.reason = j.value("reason", "");
    l.feedback = j.value("feedback", "");
    l.emulation_unsupported = j.value("emulation_unsupported", false);
  } catch (const nlohmann::json::exception& e) {
    return damaged(std::string("unexpected field types: ") + e.what());
  }
  return label_read::hit;
}

result<void> write_cached_label(const std::string& path, const cached_label& l,
                                const std::string& task, const std::string& variant) {
  nlohmann::json j{{"status", env::to_string(l.st)}, {"reason", l.reason}, {"feedback", l.feedback},
                   {"emulation_unsupported", l.emulation_unsupported}, {"task", task},
                   {"variant", variant}};
  // Checksummed as it will read back (invalid UTF-8 already replaced).
  j = nlohmann::json::parse(dump_lossy(j));
  j["sha256"] = label_checksum(j);
  return write_file_atomic(path, dump_lossy(j) + "\n");
}

} // namespace leap::runtime
