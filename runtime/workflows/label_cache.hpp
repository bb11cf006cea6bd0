// The verdict cache of corpus labelling (`leap corpus`, `leap pretrain`):
// <cache_dir>/corpus-labels/<key>.json, one entry per labelled variant, each with a SHA-256 of its
// content. Read back after a crash, it is repaired, not trusted: a damaged entry is removed with
// a reason naming the file, and the variant is labelled again. Free functions; call from one
// thread per file (the workflow's main thread).
#pragma once

#include "common/result.hpp"
#include "env/verdict.hpp"

#include <cstdint>
#include <string>

namespace leap::runtime {

struct cached_label {
  env::status st = env::status::rejected;
  std::string reason, feedback;
  bool emulation_unsupported = false;
};
enum class label_read : std::uint8_t { hit, miss, repaired };
// A label cache entry: hit; miss (no file); or repaired: damaged (not JSON, checksum mismatch,
// unknown status), removed, `problem` says why and names the file. Entries written before the
// checksum existed are read as they are.
label_read read_cached_label(const std::string& path, cached_label& out, std::string& problem);
// Writes an entry atomically with its checksum; `task` and `variant` are for a human reader.
result<void> write_cached_label(const std::string& path, const cached_label& l,
                                const std::string& task, const std::string& variant);

} // namespace leap::runtime
