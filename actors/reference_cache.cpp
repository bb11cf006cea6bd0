#include "actors/reference_cache.hpp"

namespace leap::actors {

bool reference_cache::request(const std::string& task, callback cb) {
  if (auto it = built_.find(task); it != built_.end()) {
    cb(result<std::string>(it->second));
    return false;
  }
  if (auto it = broken_.find(task); it != broken_.end()) {
    cb(result<std::string>(make_error(it->second)));
    return false;
  }
  auto& w = waiting_[task];
  w.push_back(std::move(cb));
  return w.size() == 1;
}

void reference_cache::built(const std::string& task, const std::string& build_key) {
  built_[task] = build_key;
  settle(task, result<std::string>(build_key));
}

void reference_cache::build_answered(const std::string& task, env::build_status status,
                                     const std::string& key, const std::string& diagnostics) {
  if (status == env::build_status::ok)
    built(task, key);
  else
    failed(task,
           "the reference of task '" + task + "' does not build (" + env::to_string(status)
             + "): " + diagnostics,
           status != env::build_status::cancelled);
}

void reference_cache::build_lost(const std::string& task, const std::string& why) {
  failed(task, "building the reference of task '" + task + "' failed: " + why, false);
}

void reference_cache::failed(const std::string& task, const std::string& why, bool permanent) {
  if (permanent)
    broken_[task] = why;
  settle(task, result<std::string>(make_error(why)));
}

void reference_cache::settle(const std::string& task, const result<std::string>& r) {
  auto it = waiting_.find(task);
  if (it == waiting_.end())
    return;
  auto waiters = std::move(it->second);
  waiting_.erase(it);
  for (auto& cb : waiters)
    cb(r);
}

} // namespace leap::actors
