// File manifests: a JSON file in a directory that records the size and SHA-256 of other files
// in it, so a reader can tell a complete, intact file from one torn by a crash, truncated by a
// full disk or damaged on disk. Used by checkpoint directories (policy/checkpoint) and build
// cache entries (env/build_cache). Free functions with errors as values; thread-safe (they
// touch only the files they are given).
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace leap {

// SHA-256 of a file's bytes, read in blocks (hex), and the number of bytes read.
struct file_digest {
  std::uint64_t size = 0;
  std::string sha256;
};
result<file_digest> digest_file(const std::string& path);

// Hashes <dir>/<name> for every name and writes <dir>/<manifest_name> atomically (temporary
// file + rename): write it last, after every file it lists is complete.
result<void> write_manifest(const std::string& dir, const std::vector<std::string>& names,
                            const std::string& manifest_name = "manifest.json");

enum class manifest_state : std::uint8_t {
  verified,     // every checked file has the recorded size and SHA-256
  no_manifest,  // <dir>/<manifest_name> does not exist: nothing could be checked
};

// Checks the named files (all listed files when `names` is empty) against the manifest. An
// error names the first bad file and what is wrong with it (missing, size, checksum), or the
// manifest itself when it cannot be read or parsed; a name the manifest does not list is an
// error too (the manifest was written for other contents).
result<manifest_state> verify_manifest(const std::string& dir, const std::vector<std::string>& names = {},
                                       const std::string& manifest_name = "manifest.json");

} // namespace leap
