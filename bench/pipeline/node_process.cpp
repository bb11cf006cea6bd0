#include "bench/pipeline/node_process.hpp"

#include "common/fs.hpp"
#include "common/spawn.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <thread>

namespace leap::bench {

namespace {

// The node processes running now, for the signal handler: when SIGINT, SIGTERM or SIGHUP ends
// `leap bench` while nodes run, they get SIGTERM first (they drain and exit; lock-free atomics
// and kill() are safe in a handler). The handlers are installed while any node runs.
std::array<std::atomic<pid_t>, 64> running{};
int tracked = 0; // main thread only
struct sigaction saved[3];
constexpr int forwarded[3] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void stop_nodes_then_die(int sig) {
  for (auto& p : running) {
    const pid_t pid = p.load();
    if (pid > 0)
      ::kill(pid, SIGTERM);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig); // delivered once the handler returns: the default action ends the process
}

void track(pid_t pid) {
  for (auto& p : running) {
    pid_t none = 0;
    if (p.compare_exchange_strong(none, pid))
      break;
  }
  if (tracked++ > 0)
    return;
  struct sigaction sa {};
  sa.sa_handler = stop_nodes_then_die;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i)
    ::sigaction(forwarded[i], &sa, &saved[i]);
}

void untrack(pid_t pid) {
  for (auto& p : running) {
    pid_t was = pid;
    if (p.compare_exchange_strong(was, 0))
      break;
  }
  if (--tracked > 0)
    return;
  for (int i = 0; i < 3; ++i)
    ::sigaction(forwarded[i], &saved[i], nullptr);
}

} // namespace

node_process::node_process(std::vector<std::string> argv, const std::string& log) : log_(log) {
  spawn_spec spec;
  spec.argv = std::move(argv);
  spec.stdout_path = log + ".out";
  spec.stderr_path = log + ".err";
  auto pid = spawn_child(spec);
  if (pid) {
    pid_ = *pid;
    track(pid_);
  } else {
    start_error_ = pid.message();
  }
}

node_process::~node_process() { stop(); }

result<std::string> node_process::address(std::chrono::milliseconds limit) {
  if (pid_ == 0)
    return make_error(start_error_.empty() ? "the node process is not running" : start_error_);
  const std::regex re("ready on ([0-9.]+:[0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto text = read_file(log_ + ".out");
    std::smatch m;
    if (text && std::regex_search(*text, m, re))
      return m[1].str();
    int st = 0;
    rusage ru{};
    if (::wait4(pid_, &st, WNOHANG, &ru) == pid_) {
      untrack(pid_);
      pid_ = 0;
      return make_error("the node process exited before it was ready (see " + log_ + ".err)");
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error("the node process was not ready after "
                        + std::to_string(limit.count() / 1000) + " s (see " + log_ + ".out and "
                        + log_ + ".err)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

double node_process::cpu_seconds() const {
  if (pid_ == 0)
    return -1;
  auto text = read_file("/proc/" + std::to_string(pid_) + "/stat");
  if (!text)
    return -1;
  // After the command name in parentheses: state is field 3; utime, stime, cutime and cstime
  // are fields 14 to 17, in clock ticks.
  auto close = text->rfind(')');
  if (close == std::string::npos)
    return -1;
  std::istringstream in(text->substr(close + 1));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 17 && (in >> field); ++i)
    if (i >= 14)
      ticks += std::strtod(field.c_str(), nullptr);
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? ticks / static_cast<double>(hz) : -1;
}

double node_process::stop(std::chrono::milliseconds grace) {
  if (pid_ == 0)
    return -1;
  const pid_t pid = pid_;
  pid_ = 0;
  struct untrack_at_end {
    pid_t pid;
    ~untrack_at_end() { untrack(pid); }
  } done{pid};
  auto cpu = [](const rusage& ru) {
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
           + 1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  };
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int st = 0;
  rusage ru{};
  while (std::chrono::steady_clock::now() < deadline) {
    if (::wait4(pid, &st, WNOHANG, &ru) == pid)
      return cpu(ru);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  while (::wait4(pid, &st, 0, &ru) < 0)
    if (errno != EINTR)
      return -1;
  return cpu(ru);
}

} // namespace leap::bench
