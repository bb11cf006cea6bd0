// Starting a child process that runs beside its caller - a leap verb run as a subprocess (each
// arm of `leap experiment`), or a server or node a benchmark talks to - with its standard output
// and error sent to files: the one posix_spawn of every such caller. The caller owns the pid: it
// waits for it (wait_child) or signals it. Untrusted code never starts here: compilers and
// candidate workers go through env/process.hpp (limits, sandbox, own session, timeouts).
// Plain functions; any thread.
#pragma once

#include "common/result.hpp"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace leap {

struct spawn_spec {
  std::vector<std::string> argv;      // argv[0]: the program (a path; not looked up on PATH)
  std::string program;                // the file run when it is not argv[0] (/proc/self/exe)
  std::string stdout_path;            // empty: inherited from the caller
  std::string stderr_path;            // empty: inherited from the caller
  bool append = false;                // open those files for appending instead of truncating
  std::optional<std::vector<std::string>> env; // "KEY=VALUE"; nullopt: the caller's environment
};

// The started child's pid, or an error naming the program and why it could not start.
result<pid_t> spawn_child(const spawn_spec& spec);

// Waits for `pid` (retrying when a signal interrupts the wait): its exit code, or 128 + the
// signal's number when a signal ended it; an error when it cannot be waited for.
result<int> wait_child(pid_t pid);

} // namespace leap
