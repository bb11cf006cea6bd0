// The `leap` command line: global options (--config, --set), the command table
// (runtime/commands/table.hpp) and exit codes (0 = done, whatever the verdict; 1 = leap failed
// to do what was asked; 2 = bad usage, bad config or a broken task). Runs on the process's main
// thread.
#pragma once

namespace leap::runtime {

int run_cli(int argc, char** argv);

} // namespace leap::runtime
