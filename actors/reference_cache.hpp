// The gatekeeper's cache of reference builds: each task's reference is built once per run, and
// the executions that need it while it builds wait for it. A reference that does not build
// (a broken task) is remembered, so every later attempt at that task is dropped at once with the
// same reason; a build lost to the infrastructure is not: its waiters are dropped and the next
// request builds again. Plain data, no CAF calls; used on the gatekeeper's actor thread only.
#pragma once

#include "common/result.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace leap::actors {

class reference_cache {
public:
  using callback = std::function<void(const result<std::string>& build_key)>;

  // Calls `cb` now when the reference of `task` is known, else once it is. Returns true when the
  // caller must start the build (no build of it is under way).
  bool request(const std::string& task, callback cb);
  void built(const std::string& task, const std::string& build_key);
  // permanent: the reference itself does not build; otherwise the failure was the
  // infrastructure's.
  void failed(const std::string& task, const std::string& why, bool permanent);

private:
  void settle(const std::string& task, const result<std::string>& r);
  std::map<std::string, std::string> built_, broken_;
  std::map<std::string, std::vector<callback>> waiting_;
};

} // namespace leap::actors
