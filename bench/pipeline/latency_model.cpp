#include "bench/pipeline/latency_model.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace leap::bench {

double latency_dist::sample(double u1, double u2) const {
  if (k == kind::fixed || sigma <= 0.0)
    return mean;
  // Box-Muller; u1 in (0, 1] keeps the log finite.
  const double pi = 3.14159265358979323846;
  double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * pi * u2);
  double mu = std::log(mean) - 0.5 * sigma * sigma;
  return std::exp(mu + sigma * z);
}

std::uint64_t mix(std::initializer_list<std::uint64_t> parts) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  for (auto p : parts) {
    h ^= p + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    // splitmix64 finaliser
    h += 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
  }
  return h;
}

double unit(std::uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }

std::uint64_t attempt_key::draw(std::uint64_t seed, draw_kind what) const {
  return mix({seed, static_cast<std::uint64_t>(what), task, group, attempt, turn});
}

std::string to_code(const attempt_key& k, const std::string& task_name) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "// leap bench attempt: task %u (%s) group %llu attempt %u turn %u",
                k.task, task_name.c_str(), static_cast<unsigned long long>(k.group), k.attempt,
                k.turn);
  return buf;
}

std::optional<attempt_key> parse_code(const std::string& code) {
  auto at = code.find("// leap bench attempt: task ");
  if (at == std::string::npos)
    return std::nullopt;
  attempt_key k;
  unsigned long long group = 0;
  const char* p = code.c_str() + at + std::strlen("// leap bench attempt: task ");
  char* end = nullptr;
  k.task = static_cast<std::uint32_t>(std::strtoul(p, &end, 10));
  const char* close = std::strchr(end, ')');
  if (!close || std::sscanf(close + 1, " group %llu attempt %u turn %u", &group, &k.attempt, &k.turn) != 3)
    return std::nullopt;
  k.group = group;
  return k;
}

std::vector<int> to_tokens(const attempt_key& k) {
  return {static_cast<int>(k.task), static_cast<int>(k.group & 0x7fffffff),
          static_cast<int>(k.group >> 31), static_cast<int>(k.attempt), static_cast<int>(k.turn)};
}

std::optional<attempt_key> from_tokens(const std::vector<int>& ids) {
  if (ids.size() < 5)
    return std::nullopt;
  attempt_key k;
  k.task = static_cast<std::uint32_t>(ids[0]);
  k.group = static_cast<std::uint64_t>(ids[1]) | (static_cast<std::uint64_t>(ids[2]) << 31);
  k.attempt = static_cast<std::uint32_t>(ids[3]);
  k.turn = static_cast<std::uint32_t>(ids[4]);
  return k;
}

deadline_timer::deadline_timer() : thread_([this] { loop(); }) {}

deadline_timer::~deadline_timer() {
  {
    std::lock_guard<std::mutex> lk(mtx_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::uint64_t deadline_timer::schedule(std::chrono::steady_clock::duration after,
                                       std::function<void()> fn) {
  auto when = std::chrono::steady_clock::now() + after;
  std::uint64_t id;
  {
    std::lock_guard<std::mutex> lk(mtx_);
    id = next_++;
    jobs_.emplace(id, std::make_pair(when, std::move(fn)));
    due_.emplace(when, id);
  }
  cv_.notify_all();
  return id;
}

bool deadline_timer::cancel(std::uint64_t id) {
  std::lock_guard<std::mutex> lk(mtx_);
  auto it = jobs_.find(id);
  if (it == jobs_.end())
    return false;
  auto range = due_.equal_range(it->second.first);
  for (auto d = range.first; d != range.second; ++d)
    if (d->second == id) {
      due_.erase(d);
      break;
    }
  jobs_.erase(it);
  return true;
}

void deadline_timer::loop() {
  std::unique_lock<std::mutex> lk(mtx_);
  while (!stop_) {
    if (due_.empty()) {
      cv_.wait(lk);
      continue;
    }
    auto first = due_.begin();
    if (std::chrono::steady_clock::now() < first->first) {
      cv_.wait_until(lk, first->first);
      continue;
    }
    auto id = first->second;
    due_.erase(first);
    auto it = jobs_.find(id);
    auto fn = std::move(it->second.second);
    jobs_.erase(it);
    lk.unlock();
    fn(); // outside the lock: it may schedule or cancel
    lk.lock();
  }
}

} // namespace leap::bench
