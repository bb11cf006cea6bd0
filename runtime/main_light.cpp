// Entry point of the `leap` executable: the front end without LibTorch (runtime/commands/cli.hpp
// says which verbs it runs and how it hands the others to `leap-torch`). Main thread.
#include "runtime/commands/cli.hpp"

#include <csignal>

int main(int argc, char** argv) {
  // A write past RLIMIT_FSIZE fails with EFBIG (an error leap reports, naming the file) instead
  // of killing leap; children get the default back (env/process.cpp).
  std::signal(SIGXFSZ, SIG_IGN);
  return leap::runtime::run_light_cli(argc, argv);
}
