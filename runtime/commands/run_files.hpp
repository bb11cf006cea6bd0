// Files a run keeps outside its checkpoint, read back after a crash: the JSONL logs of `leap
// train` (metrics.jsonl, groups.jsonl: one object per line, the last one possibly cut by a kill)
// and the verdict cache of `leap corpus` (<cache_dir>/corpus-labels/<key>.json, each entry with
// a SHA-256 of its content). Both are repaired, not trusted: a cut or damaged line or entry is
// dropped with a warning naming the file, and redone. Free functions; call from one thread per
// file (the command's main thread).
#pragma once

#include "common/result.hpp"
#include "env/verdict.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace leap::runtime {

struct jsonl_repair {
  std::size_t kept = 0;
  std::size_t after_step = 0; // lines of steps after the resumed one (redone by the resume)
  std::size_t damaged = 0;    // lines that are not a JSON object with an integer "step"
  std::optional<std::string> warning; // when damaged lines were dropped: names the file
};
// Keeps the lines of a JSONL file whose "step" is at most `step`; rewrites it atomically.
result<jsonl_repair> truncate_jsonl(const std::string& path, std::int64_t step);

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
