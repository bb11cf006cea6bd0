// One run, one directory: an exclusive lock on a run directory (its `.leap-lock` file, holding
// the owner's PID) for as long as the object lives. The lock is the kernel's (flock), so it goes
// with its process however that process ends: a directory whose previous owner died is simply
// taken over. Not thread-safe; make and drop it on one thread (a command's main thread).
#pragma once

#include "common/result.hpp"

#include <string>

namespace leap {

class dir_lock {
public:
  // Locks `dir` (which must exist) for `what` ("leap train"). An error names the directory and
  // the PID of the process that holds it.
  static result<dir_lock> acquire(const std::string& dir, const std::string& what);

  dir_lock(dir_lock&& other) noexcept;
  dir_lock& operator=(dir_lock&& other) noexcept;
  dir_lock(const dir_lock&) = delete;
  dir_lock& operator=(const dir_lock&) = delete;
  ~dir_lock(); // releases the lock (the file stays: removing it would race a new owner)

private:
  explicit dir_lock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

} // namespace leap
