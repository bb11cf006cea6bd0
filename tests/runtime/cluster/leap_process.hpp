// A `leap` child process for the cluster tests: started with posix_spawn, stdout and stderr to
// files, waited for with a bound, killed (SIGKILL) if the test leaves it running. Test code only.
#pragma once

#include "common/fs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace leap::test {

class leap_process {
public:
  leap_process(std::vector<std::string> args, std::string out_prefix,
               std::vector<std::string> env = {})
      : out_(out_prefix + ".out"), err_(out_prefix + ".err") {
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e)
      envs.push_back(*e);
    for (auto& e : env)
      envs.push_back(e);
    std::vector<char*> envp;
    for (auto& e : envs)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0)
      pid_ = 0;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~leap_process() { kill(SIGKILL); }
  leap_process(const leap_process&) = delete;
  leap_process& operator=(const leap_process&) = delete;

  pid_t pid() const { return pid_; }
  std::string out() const { return read_or_empty(out_); }
  std::string err() const { return read_or_empty(err_); }

  // Waits until `pattern` matches stdout (or stderr), the process exits, or `limit` passes;
  // returns the first capture group (or the whole match).
  std::optional<std::string> wait_for(const std::string& pattern, std::chrono::seconds limit,
                                      bool in_stderr = false) {
    std::regex re(pattern);
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      auto text = in_stderr ? err() : out();
      std::smatch m;
      if (std::regex_search(text, m, re))
        return m.size() > 1 ? m[1].str() : m[0].str();
      if (exited(std::chrono::milliseconds(0)))
        return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  // True once it has exited (waiting up to `limit`); status() then says how.
  bool exited(std::chrono::milliseconds limit) {
    if (done_)
      return true;
    if (pid_ == 0)
      return done_ = true;
    auto end = std::chrono::steady_clock::now() + limit;
    do {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_)
        return done_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < end);
    return false;
  }
  int status() const { return status_; }
  bool exited_ok() const { return done_ && WIFEXITED(status_) && WEXITSTATUS(status_) == 0; }

  void kill(int sig) {
    if (pid_ == 0 || done_)
      return;
    ::kill(pid_, sig);
    if (sig == SIGKILL)
      exited(std::chrono::seconds(10));
  }

private:
  static std::string read_or_empty(const std::string& path) {
    auto t = read_file(path);
    return t ? *t : std::string();
  }
  std::string out_, err_;
  pid_t pid_ = 0;
  int status_ = 0;
  bool done_ = false;
};

} // namespace leap::test
