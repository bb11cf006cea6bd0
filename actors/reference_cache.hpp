// The cache of reference builds of the gatekeeper and of the environment service (each holds
// its own): each task's reference is built once per run, and
// the executions that need it while it builds wait for it. A reference that does not build
// (a broken task) is remembered, so every later attempt at that task is dropped at once with the
// same reason; a build lost to the infrastructure is not: its waiters are dropped and the next
// request builds again. Plain data, no CAF calls; used on its owner actor's thread only.
#pragma once

#include "common/result.hpp"
#include "env/compiler.hpp"

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
  // The answer of the reference's build: its key when it built; otherwise "does not build",
  // remembered unless the build was cancelled.
  void build_answered(const std::string& task, env::build_status status, const std::string& key,
                      const std::string& diagnostics);
  // The build job failed inside leap (every try): not remembered, the next request builds again.
  void build_lost(const std::string& task, const std::string& why);
  // permanent: the reference itself does not build; otherwise the failure was the
  // infrastructure's.
  void failed(const std::string& task, const std::string& why, bool permanent);

private:
  void settle(const std::string& task, const result<std::string>& r);
  std::map<std::string, std::string> built_, broken_;
  std::map<std::string, std::vector<callback>> waiting_;
};

} // namespace leap::actors
