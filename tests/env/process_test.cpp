// Tests of the asynchronous process runner: exit codes, signals, timeouts that kill the whole
// process group, output caps, resource limits, cancellation and concurrency.
#include "env/process.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <future>
#include <thread>

using namespace leap::env;

namespace {
process_spec sh(const std::string& script, double timeout = 10) {
  process_spec s;
  s.argv = {"/bin/sh", "-c", script};
  s.timeout_seconds = timeout;
  return s;
}
// Running, not a zombie (a killed orphan stays a zombie where PID 1 does not reap).
bool alive(pid_t pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f)
    return false;
  int p = 0;
  char comm[256] = {0}, state = '?';
  int n = std::fscanf(f, "%d %255s %c", &p, comm, &state);
  std::fclose(f);
  return n == 3 && state != 'Z' && state != 'X';
}
} // namespace

TEST(Process, ExitCodeAndOutput) {
  auto o = run_blocking(sh("echo hello; echo oops >&2; exit 3"));
  ASSERT_TRUE(o.started);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_FALSE(o.signaled);
  EXPECT_EQ(o.out, "hello\n");
  EXPECT_EQ(o.err, "oops\n");
  EXPECT_EQ(o.describe(), "exit code 3");
}

TEST(Process, SignalIsReported) {
  auto o = run_blocking(sh("kill -SEGV $$"));
  EXPECT_TRUE(o.signaled);
  EXPECT_EQ(o.term_signal, SIGSEGV);
  EXPECT_NE(o.describe().find("SIGSEGV"), std::string::npos) << o.describe();
}

TEST(Process, MissingProgramIsAStartError) {
  process_spec s;
  s.argv = {"/nonexistent/leap-tool"};
  auto o = run_blocking(s);
  EXPECT_FALSE(o.started);
  EXPECT_FALSE(o.start_error.empty());
}

TEST(Process, TimeoutKillsTheWholeGroup) {
  // The child starts a grandchild that would outlive it, writes its pid, and hangs.
  char tmpl[] = "/tmp/leap-proc-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string pidfile = std::string(tmpl) + "/pid";
  auto t0 = std::chrono::steady_clock::now();
  auto o = run_blocking(sh("sleep 60 & echo $! > " + pidfile + "; sleep 60", 0.5));
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(o.timed_out);
  EXPECT_LT(secs, 5.0);
  FILE* f = std::fopen(pidfile.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int pid = 0;
  ASSERT_EQ(std::fscanf(f, "%d", &pid), 1);
  std::fclose(f);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(alive(pid)) << "grandchild " << pid << " survived the timeout";
  std::remove(pidfile.c_str());
  ::rmdir(tmpl);
}

TEST(Process, OutputIsCapped) {
  auto s = sh("head -c 1000000 /dev/zero | tr '\\0' x");
  s.output_limit = 1000;
  auto o = run_blocking(s);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.out.size(), 1000u);
  EXPECT_TRUE(o.out_truncated);
}

TEST(Process, FloodPastTheHardLimitClosesTheStream) {
  auto s = sh("exec head -c 50000000 /dev/zero");
  s.output_limit = 1000;
  s.output_hard_limit = 1 << 20;
  auto o = run_blocking(s);
  EXPECT_TRUE(o.output_limit_exceeded);
  EXPECT_TRUE(o.signaled);
  EXPECT_EQ(o.term_signal, SIGPIPE) << o.describe();
  EXPECT_EQ(o.out.size(), 1000u);
}

TEST(Process, AddressSpaceLimitApplies) {
  auto s = sh("python3 -c 'x = bytearray(512*1024*1024)' 2>/dev/null || exit 42");
  s.address_space_bytes = 256ll << 20;
  auto o = run_blocking(s);
  EXPECT_EQ(o.exit_code, 42) << o.describe();
}

TEST(Process, CleanEnvironment) {
  auto s = sh("echo \"[$HOME][$LEAP_X]\"");
  s.argv[0] = "/bin/sh";
  s.clean_env = true;
  s.env = {"LEAP_X=1"};
  auto o = run_blocking(s);
  EXPECT_EQ(o.out, "[][1]\n");
}

// spec.env goes over the inherited environment; keys longer than other entries are looked up
// without reading past those (under AddressSanitizer, Boost's own lookup did).
TEST(Process, EnvironmentOverridesTheInheritedOne) {
  ::setenv("LEAP_T", "1", 1);
  auto s = sh("echo \"[$LEAP_T][$LEAP_A_MUCH_LONGER_VARIABLE_NAME][${PATH:+path}]\"");
  s.env = {"LEAP_T=2", "LEAP_A_MUCH_LONGER_VARIABLE_NAME=x=y"};
  auto o = run_blocking(s);
  ::unsetenv("LEAP_T");
  EXPECT_EQ(o.out, "[2][x=y][path]\n") << o.describe() << o.err;
  s.clean_env = true;
  s.env = {"A=1", "LEAP_A_MUCH_LONGER_VARIABLE_NAME=z", "A=3"};
  s.argv = {"/bin/sh", "-c", "echo \"[$A][$LEAP_A_MUCH_LONGER_VARIABLE_NAME][$LEAP_T]\""};
  EXPECT_EQ(run_blocking(s).out, "[3][z][]\n");
}

TEST(Process, CancelAndConcurrency) {
  process_runner runner;
  std::promise<process_outcome> slow_p;
  auto h = runner.start(sh("sleep 30"), [&](process_outcome o) { slow_p.set_value(std::move(o)); });
  std::vector<std::promise<process_outcome>> ps(8);
  for (int i = 0; i < 8; ++i)
    runner.start(sh("exit " + std::to_string(i)), [&ps, i](process_outcome o) { ps[i].set_value(std::move(o)); });
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(ps[i].get_future().get().exit_code, i);
  runner.cancel(h);
  auto o = slow_p.get_future().get();
  EXPECT_TRUE(o.cancelled);
  EXPECT_EQ(runner.active(), 0u);
}

// Shutdown (the destructor) cancels what runs and lets the callbacks run, but what those callbacks
// start (the next compile step, the reference run) is not launched: it is reported cancelled at
// once, so shutdown neither waits for new children nor leaves them behind.
TEST(Process, ShutdownLaunchesNothingMore) {
  std::promise<process_outcome> first_p, second_p;
  auto t0 = std::chrono::steady_clock::now();
  {
    process_runner runner;
    runner.start(sh("sleep 30"), [&](process_outcome o) {
      first_p.set_value(std::move(o));
      runner.start(sh("sleep 30"), [&](process_outcome o2) { second_p.set_value(std::move(o2)); });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    runner.shutdown();
    EXPECT_EQ(runner.active(), 0u);
    runner.shutdown(); // idempotent
  }
  auto took = std::chrono::steady_clock::now() - t0;
  auto first = first_p.get_future().get();
  EXPECT_TRUE(first.cancelled) << first.describe();
  auto second = second_p.get_future().get();
  EXPECT_TRUE(second.cancelled) << second.describe();
  EXPECT_FALSE(second.started);
  EXPECT_LT(took, std::chrono::seconds(4));
}
