// The exit statuses a workflow returns and the `leap` command line passes on as its own: 0 = done,
// whatever the verdict; 1 = leap failed to do what was asked; 2 = bad usage, bad config or a
// broken task; a run stopped by Ctrl-C or SIGTERM returns 130. Constants only; any thread.
#pragma once

namespace leap::runtime {

constexpr int exit_ok = 0;     // done, whatever the verdict
constexpr int exit_failed = 1; // leap failed to do what was asked
constexpr int exit_usage = 2;  // bad usage, bad config, broken task

} // namespace leap::runtime
