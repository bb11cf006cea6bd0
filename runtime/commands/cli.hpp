// The `leap` command line: global options (--config, --set), the command table
// (runtime/commands/table.hpp) and exit codes (0 = done, whatever the verdict; 1 = leap failed
// to do what was asked; 2 = bad usage, bad config or a broken task). Runs on the process's main
// thread.
//
// Two executables share it. `leap` (runtime/main_light.cpp) links no LibTorch: it runs the verbs
// that only read the configuration, the task suite, the build cache or a run's files, or check a
// candidate (`version`, `config`, `tasks list`, `check`, `cache`, `report`, `tokenize`,
// `cluster status`), and replaces itself (execv, same PID, same arguments) with `leap-torch` from
// its own directory for every other verb and for --help. `leap-torch` (runtime/main.cpp) runs
// every verb. Loading LibTorch costs about half a second per process, which a script that runs
// one `leap check` per candidate should not pay.
#pragma once

namespace leap::runtime {

// Every verb (`leap-torch`).
int run_cli(int argc, char** argv);

// The verbs without LibTorch; the rest are handed to `leap-torch` (`leap`).
int run_light_cli(int argc, char** argv);

} // namespace leap::runtime
