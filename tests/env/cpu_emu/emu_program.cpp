// Implementation of the emulation test helper: temp files, g++ and a `timeout`-wrapped run.
#include "emu_program.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "env/cpu_emu/rewriter.hpp"

namespace leap::emu::testing {
namespace {

// A private directory for this process's programs, removed at exit unless
// LEAP_EMU_KEEP_TEST_FILES is set (then its path is printed).
class scratch_dir {
 public:
  scratch_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "leap_emu_test_XXXXXX").string();
    if (mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~scratch_dir() {
    if (path_.empty()) return;
    if (std::getenv("LEAP_EMU_KEEP_TEST_FILES")) {
      std::fprintf(stderr, "emulation test files kept in %s\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string work_dir() {
  static const scratch_dir dir;
  return dir.path().empty() ? "/tmp" : dir.path();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int run_shell(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  if (st == -1) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

program_result build_and_run(const std::string& name, const std::string& cuda, int timeout_s, bool raw_cpp,
                             const std::string& env) {
  program_result r;
  const std::string base = work_dir() + "/" + name;
  std::string code = cuda;
  if (!raw_cpp) {
    rewrite_output rw = rewrite_cuda_source(cuda, name + ".cu");
    if (!rw.ok) {
      r.rewrite_error = rw.error;
      return r;
    }
    code = rw.code;
  }
  r.rewritten = true;
  std::ofstream(base + ".cpp") << code;
  const std::string compile = std::string(LEAP_EMU_CXX) + " -std=c++17 -O2 -I" LEAP_EMU_INCLUDE_DIR " " + base +
                              ".cpp " LEAP_EMU_RT_LIB " -lboost_context -pthread -o " + base + " > " + base +
                              ".clog 2>&1";
  r.compile_rc = run_shell(compile);
  r.compile_log = read_file(base + ".clog");
  if (r.compile_rc != 0) return r;
  const auto t0 = std::chrono::steady_clock::now();
  r.run_rc = run_shell(env + " timeout -s KILL " + std::to_string(timeout_s) + " " + base + " > " + base +
                       ".out 2>&1");
  r.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.run_rc == 128 + 9 || r.run_rc == 137) r.run_rc = 124;
  r.output = read_file(base + ".out");
  return r;
}

std::string load_program(const std::string& file) {
  const std::string path = std::string(LEAP_EMU_PROGRAMS_DIR) + "/" + file;
  std::ifstream f(path);
  if (!f) {
    ADD_FAILURE() << "cannot read the test program " << path;
    return {};
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace leap::emu::testing
