// The `leap` front end: the verbs that need no LibTorch run in this process; every other verb
// (and --help, which lists them all) replaces this process with `leap-torch` from the same
// directory. Main thread, before any other thread exists (execv must not race with threads).
#include "runtime/commands/cli.hpp"
#include "runtime/commands/table.hpp"

#include "common/thread_pools_env.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <unistd.h>

namespace leap::runtime {

std::vector<command> light_commands() {
  return {tasks_list_command(), tasks_show_command(), check_command(),  config_command(),  cluster_status_command(),
          cache_command(),      tokenize_command(), report_command(), version_command()};
}

namespace {

// The executable with every verb: `leap-torch` next to this one (/proc/self/exe resolves
// symlinks, so a link to build/leap on the PATH still finds it).
std::string full_executable() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || self.empty())
    return "leap-torch"; // no /proc: rely on the PATH
  return (self.parent_path() / "leap-torch").string();
}

int hand_over(char** argv) {
  const auto full = full_executable();
  // LibTorch's OpenMP (libgomp) and OpenBLAS read how their idle threads wait when they are
  // loaded (common/thread_pools_env.hpp says what each setting is worth). Set here, leap-torch
  // need not re-execute itself.
  prefer_quiet_thread_pools();
  if (full.find('/') == std::string::npos)
    ::execvp(full.c_str(), argv);
  else
    ::execv(full.c_str(), argv);
  const int err = errno;
  std::cerr << "leap: this command runs in " << full << ", which could not be started: "
            << std::strerror(err)
            << (err == ENOENT ? " (build it: ninja -C build leap-torch, or make build)" : "")
            << "\n";
  return exit_failed;
}

} // namespace

int run_light_cli(int argc, char** argv) {
  return dispatch(argc, argv, light_commands(), [argv] { return hand_over(argv); });
}

} // namespace leap::runtime
