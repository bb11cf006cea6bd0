// Entry point of the `leap-torch` executable: every verb, LibTorch linked (the `leap` front end,
// runtime/main_light.cpp, hands it the verbs it does not run itself; runtime/commands/cli.hpp).
// Runs on the main thread before any actor system or LibTorch thread pool exists.
#include "runtime/commands/cli.hpp"

#include "common/allocator.hpp"

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace {

// LibTorch's CPU kernels run on libgomp, which reads OMP_WAIT_POLICY once, when the library is
// loaded (before main). Its default lets idle OpenMP threads spin and then yield, and with the
// many small ops of a small policy that spinning cost a third of the CPU time: on the 2-core
// reference machine `leap pretrain` went from 1725 to 2664 tokens/s with PASSIVE (1-minute runs
// side by side, configs/quickstart.toml). The `leap` front end sets it before it hands a verb
// over; started directly, leap-torch re-executes itself once with PASSIVE unless the user chose a
// policy; if the re-exec fails it simply runs with the default.
void prefer_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr)
    return;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0)
    return;
  ::execv("/proc/self/exe", argv);
  // Still here: exec failed (no /proc, say). Carry on in this process.
}

} // namespace

int main(int argc, char** argv) {
  prefer_passive_openmp(argv);
  // A write past RLIMIT_FSIZE fails with EFBIG (an error leap reports, naming the file) instead
  // of killing leap; children get the default back (env/process.cpp).
  std::signal(SIGXFSZ, SIG_IGN);
  leap::tune_allocator_for_tensors();
  return leap::runtime::run_cli(argc, argv);
}
