// Entry point of the `leap-torch` executable: every verb, LibTorch linked (the `leap` front end,
// runtime/main_light.cpp, hands it the verbs it does not run itself; runtime/commands/cli.hpp).
// Runs on the main thread before any actor system or LibTorch thread pool exists.
#include "runtime/commands/cli.hpp"

#include "common/allocator.hpp"
#include "common/thread_pools_env.hpp"

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace {

// LibTorch's libgomp and OpenBLAS read how their idle threads wait once, when they are loaded
// (before main); common/thread_pools_env.hpp has the settings and what they are worth. The `leap`
// front end sets them before it hands a verb over; started directly, leap-torch re-executes itself
// once with them unless the user set them all; if the re-exec fails it simply runs with the
// libraries' defaults.
void reexec_with_quiet_thread_pools(char** argv) {
  if (!leap::prefer_quiet_thread_pools())
    return;
  ::execv("/proc/self/exe", argv);
  // Still here: exec failed (no /proc, say). Carry on in this process.
}

} // namespace

int main(int argc, char** argv) {
  reexec_with_quiet_thread_pools(argv);
  // A write past RLIMIT_FSIZE fails with EFBIG (an error leap reports, naming the file) instead
  // of killing leap; children get the default back (env/process.cpp).
  std::signal(SIGXFSZ, SIG_IGN);
  leap::tune_allocator_for_tensors();
  return leap::runtime::run_cli(argc, argv);
}
