// The `leap` front end (runtime/commands/cli.hpp): it loads no LibTorch, runs its own verbs in
// its own process, hands every other verb (and --help) to `leap-torch` from its own directory
// with the idle-wait settings of OpenMP and OpenBLAS set, and says what to build when leap-torch
// is missing.
#include "common/fs.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

struct run_result {
  int exit_code = -1;
  std::string out;
};

// Runs a shell command line; stdout and stderr together.
run_result run(const std::string& cmd) {
  run_result r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, n);
  int st = ::pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

const std::string leap_bin = LEAP_BINARY;
const std::string leap_torch = std::string(LEAP_BINARY_DIR) + "/leap-torch";

TEST(FrontEnd, LinksNoLibTorchWhileLeapTorchDoes) {
  auto front = run("ldd " + leap_bin);
  ASSERT_EQ(front.exit_code, 0) << front.out;
  EXPECT_EQ(front.out.find("libtorch"), std::string::npos) << front.out;
  EXPECT_EQ(front.out.find("libgomp"), std::string::npos) << front.out;
  auto full = run("ldd " + leap_torch);
  ASSERT_EQ(full.exit_code, 0) << full.out;
  EXPECT_NE(full.out.find("libtorch"), std::string::npos) << full.out;
}

TEST(FrontEnd, HelpListsEveryVerbThroughLeapTorch) {
  auto r = run(leap_bin + " --help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* verb : {"tasks verify", "check", "pretrain", "train", "eval", "serve", "node",
                           "bench", "version", "report", "tokenize", "cache"})
    EXPECT_NE(r.out.find(std::string("  ") + verb), std::string::npos) << verb << "\n" << r.out;
}

TEST(FrontEnd, AHandedOverVerbRunsWithQuietThreadPoolsUnlessTheUserChoseOtherwise) {
  // Both thread-pool variables unset, and for `doctor`, which also verifies every build in the
  // cache, an empty cache of the test's own, not the user's (a developer's cache of tens of
  // thousands of builds took 4 s a call).
  auto cache = leap::make_temp_dir(leap::temp_root(), "leap-front-cache-");
  ASSERT_TRUE(cache.ok()) << cache.message();
  const std::string unset =
      "env -u OMP_WAIT_POLICY -u OPENBLAS_THREAD_TIMEOUT LEAP_CACHE_DIR=" + *cache + " ";
  // `config show` runs in the front end; an unknown verb goes to leap-torch, whose error lists
  // `bench` (a verb only leap-torch has): proof that it was handed over.
  auto unknown = run(unset + leap_bin + " no-such-verb");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("unknown command 'no-such-verb'"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("bench"), std::string::npos) << unknown.out;
  // `doctor` runs in leap-torch and shows the settings LibTorch's OpenMP and OpenBLAS were
  // loaded with. A variable the user set is kept, and the other one still gets leap's value;
  // started directly, leap-torch re-executes itself once with the same settings.
  struct doctor_case {
    std::string env, exe, omp, blas;
  };
  for (const auto& c : {doctor_case{"", leap_bin, "PASSIVE", "4"},
                        doctor_case{"OMP_WAIT_POLICY=ACTIVE ", leap_bin, "ACTIVE", "4"},
                        doctor_case{"OPENBLAS_THREAD_TIMEOUT=28 ", leap_bin, "PASSIVE", "28"},
                        doctor_case{"", leap_torch, "PASSIVE", "4"}}) {
    auto r = run(unset + c.env + c.exe + " doctor");
    EXPECT_EQ(r.exit_code, 0) << c.env << c.exe << "\n" << r.out;
    EXPECT_NE(r.out.find("OMP_WAIT_POLICY=" + c.omp + "\n"), std::string::npos)
        << c.env << c.exe << "\n" << r.out;
    EXPECT_NE(r.out.find("OPENBLAS_THREAD_TIMEOUT=" + c.blas + "\n"), std::string::npos)
        << c.env << c.exe << "\n" << r.out;
  }
  // The front end's own verbs answer without leap-torch.
  auto version = run(leap_bin + " version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("leap ", 0), 0u) << version.out;
  std::error_code ec;
  fs::remove_all(*cache, ec);
}

TEST(FrontEnd, WithoutLeapTorchAHandedOverVerbSaysWhatToBuild) {
  auto dir = leap::make_temp_dir(leap::temp_root(), "leap-front-");
  ASSERT_TRUE(dir.ok()) << dir.message();
  std::error_code ec;
  fs::copy_file(leap_bin, *dir + "/leap", ec);
  ASSERT_FALSE(ec) << ec.message();
  fs::permissions(*dir + "/leap", fs::perms::owner_all, fs::perm_options::add, ec);
  // Its own verbs still work alone...
  auto version = run(*dir + "/leap version");
  EXPECT_EQ(version.exit_code, 0) << version.out;
  // ...a LibTorch verb is a clear failure naming the missing executable and how to build it.
  auto train = run(*dir + "/leap train --out " + *dir + "/run");
  EXPECT_EQ(train.exit_code, 1) << train.out;
  EXPECT_NE(train.out.find(*dir + "/leap-torch"), std::string::npos) << train.out;
  EXPECT_NE(train.out.find("ninja -C build leap-torch"), std::string::npos) << train.out;
  EXPECT_FALSE(fs::exists(*dir + "/run"));
  fs::remove_all(*dir, ec);
}

} // namespace
