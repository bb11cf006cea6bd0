// The `leap` command line: subcommands, global options (--config, --set), exit codes
// (0 = done, whatever the verdict; 1 = a check or verification failed inside leap; 2 = bad
// usage, bad config or a broken task). Runs on the process's main thread.
#pragma once

namespace leap::runtime {

int run_cli(int argc, char** argv);

} // namespace leap::runtime
