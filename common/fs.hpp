// File helpers with errors as values: whole-file read, atomic write (temp file + rename, so a
// reader never sees half a file), unique temporary directories. Thread-safe.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>

namespace leap {

result<std::string> read_file(const std::string& path);
// Writes to "<path>.tmp.<random>" then renames over `path`.
result<void> write_file_atomic(const std::string& path, std::string_view content);
// Creates a fresh directory "<parent>/<prefix>XXXXXX" (parent created if missing).
result<std::string> make_temp_dir(const std::string& parent, const std::string& prefix);
// $TMPDIR or /tmp.
std::string temp_root();
// Random 64-bit value from the OS (for seeds and unique names).
unsigned long long os_random_u64();

} // namespace leap
