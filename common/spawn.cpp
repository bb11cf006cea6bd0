#include "common/spawn.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace leap {

result<pid_t> spawn_child(const spawn_spec& spec) {
  if (spec.argv.empty())
    return make_error("spawn_child: no program given (empty argv)");
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  std::vector<char*> envp;
  if (spec.env) {
    env_s = *spec.env;
    for (auto& e : env_s)
      envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const int flags = O_WRONLY | O_CREAT | (spec.append ? O_APPEND : O_TRUNC);
  if (!spec.stdout_path.empty())
    posix_spawn_file_actions_addopen(&fa, 1, spec.stdout_path.c_str(), flags, 0644);
  if (!spec.stderr_path.empty())
    posix_spawn_file_actions_addopen(&fa, 2, spec.stderr_path.c_str(), flags, 0644);
  const std::string& program = spec.program.empty() ? spec.argv[0] : spec.program;
  pid_t pid = 0;
  int rc = posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(),
                       spec.env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return make_error("cannot start " + program + ": " + std::strerror(rc));
  return pid;
}

result<int> wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return make_error("cannot wait for process " + std::to_string(pid) + ": "
                        + std::strerror(errno));
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return make_error("process " + std::to_string(pid) + " neither exited nor was killed");
}

} // namespace leap
