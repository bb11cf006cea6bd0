// Test helper: kills descendants of a process by command name, as an operator or the OOM killer
// would (SIGKILL, not sent by leap). Reads /proc (Linux). Test code only.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace leap::test {

struct proc_entry {
  pid_t pid = 0;
  pid_t ppid = 0;
  std::string comm;
};

// Every process, from /proc/<pid>/stat ("pid (comm) state ppid ...").
inline std::vector<proc_entry> list_processes() {
  std::vector<proc_entry> out;
  std::error_code ec;
  for (auto& d : std::filesystem::directory_iterator("/proc", ec)) {
    auto name = d.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
      continue;
    std::ifstream in(d.path() / "stat");
    std::string line;
    if (!std::getline(in, line))
      continue;
    auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size())
      continue;
    proc_entry p;
    p.pid = static_cast<pid_t>(std::stol(name));
    p.comm = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    rest >> state >> p.ppid;
    out.push_back(p);
  }
  return out;
}

// Descendants of `root` whose command name is one of `names` (all of them when empty).
inline std::vector<proc_entry> descendants(pid_t root, const std::set<std::string>& names) {
  auto all = list_processes();
  std::map<pid_t, std::vector<const proc_entry*>> children;
  for (auto& p : all)
    children[p.ppid].push_back(&p);
  std::vector<proc_entry> out;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    auto pid = todo.back();
    todo.pop_back();
    for (auto* c : children[pid]) {
      todo.push_back(c->pid);
      if (names.empty() || names.count(c->comm))
        out.push_back(*c);
    }
  }
  return out;
}

// Kills the first matching descendant; its command name, or "" when none was found.
inline std::string kill_one(pid_t root, const std::set<std::string>& names) {
  for (auto& p : descendants(root, names))
    if (::kill(p.pid, SIGKILL) == 0)
      return p.comm;
  return "";
}

} // namespace leap::test
