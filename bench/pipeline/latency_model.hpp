// Benchmark harness (never reachable from `leap train`): the latency models that stand in for a
// pipeline stage in `leap bench`, and the attempt identity they key their draws on.
//
// Every draw (a service time, a pass/fail outcome) is a pure function of (scenario seed, group,
// attempt, turn, what), so async, sync and DCP-off runs of one scenario see the same latencies and
// outcomes for the same attempt: their differences come from scheduling alone.
// deadline_timer completes simulated jobs on its own thread. Pure C++ (no CAF); thread-safe
// where noted.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace leap::bench {

// A service-time distribution in scenario seconds: fixed, or lognormal with the given mean and
// sigma (the standard deviation of the underlying normal; mu = ln(mean) - sigma^2 / 2, so the
// distribution's mean is `mean`).
struct latency_dist {
  enum class kind { fixed, lognormal };
  kind k = kind::fixed;
  double mean = 0.0;
  double sigma = 0.0;
  // The draw for two independent uniforms in [0, 1).
  double sample(double u1, double u2) const;
};

// Stable 64-bit mixing of a key (splitmix64 steps) and a uniform in [0, 1) from it.
std::uint64_t mix(std::initializer_list<std::uint64_t> parts);
double unit(std::uint64_t h);

// What a draw is for (part of the key).
enum class draw_kind : std::uint64_t { generate = 1, compile = 2, execute = 3, outcome = 4, pick = 5 };

// One attempt's turn: which synthetic task, group, attempt index and turn (1-based).
struct attempt_key {
  std::uint32_t task = 0;
  std::uint64_t group = 0;
  std::uint32_t attempt = 0;
  std::uint32_t turn = 1;
  std::uint64_t draw(std::uint64_t seed, draw_kind what) const;
};

// The key travels through the real gatekeeper as the sampled "code": a one-line comment the
// latency-model stages parse back (and on later turns, the prompt carries it to the generator).
std::string to_code(const attempt_key& k, const std::string& task_name);
std::optional<attempt_key> parse_code(const std::string& code);
// As token ids (the generator's completion; the bench's decode maps them back to to_code text).
std::vector<int> to_tokens(const attempt_key& k);
std::optional<attempt_key> from_tokens(const std::vector<int>& ids);

// One thread that runs callbacks at deadlines. schedule() returns an id for cancel(); cancel()
// returns true when the callback had not run (and now never will). Thread-safe. The destructor
// drops callbacks not yet due and joins the thread.
class deadline_timer {
 public:
  deadline_timer();
  ~deadline_timer();
  deadline_timer(const deadline_timer&) = delete;
  deadline_timer& operator=(const deadline_timer&) = delete;
  std::uint64_t schedule(std::chrono::steady_clock::duration after, std::function<void()> fn);
  bool cancel(std::uint64_t id);

 private:
  void loop();
  std::mutex mtx_;
  std::condition_variable cv_;
  std::multimap<std::chrono::steady_clock::time_point, std::uint64_t> due_;
  std::map<std::uint64_t, std::pair<std::chrono::steady_clock::time_point, std::function<void()>>> jobs_;
  std::uint64_t next_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace leap::bench
