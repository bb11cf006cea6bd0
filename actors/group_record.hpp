// The gatekeeper's records of one group, beside its rollout (algo/rollout.hpp keeps the control
// state): what the rollout does not keep, every turn's prompt, completion, behaviour log-probs,
// policy version, verdict and timings, each attempt's job in flight and build, and
// the group's counters; finish() assembles the finished group from both. Plain data, no CAF
// calls; used on the gatekeeper's actor thread only.
#pragma once

#include "algo/rollout.hpp"
#include "env/verdict.hpp"
#include "messages/train_messages.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace leap::actors {

struct attempt_io {
  std::vector<msg::turn_record> turns; // one per rollout turn
  std::vector<int> prompt;             // of the turn being sampled
  std::uint64_t job = 0;               // its compile or execute job in flight (0: none)
  std::string build;                   // the built candidate's content address
};

class group_record {
public:
  using clock = std::chrono::steady_clock;
  group_record(msg::group_start start, int group_size, clock::time_point t0 = clock::now());

  const msg::group_start& start() const { return start_; }
  attempt_io& io(int a) { return io_.at(static_cast<std::size_t>(a)); }
  double seconds() const;

  // A sample of attempt `a`'s next turn arrived (its prompt is io(a).prompt).
  void sampled(int a, const msg::generated& s, std::int64_t policy_version);
  // The verdict of attempt `a`'s current turn.
  void judged(int a, const env::verdict& v);

  // Counters of the finished group (attempts, compiles, cache hits, cancelled, later turns).
  msg::group_result& counts() { return counts_; }

  // The finished group: the rollout's decision and ends with these records (moved out), each
  // turn with the code and feedback the rollout kept for it.
  msg::group_result finish(const algo::rollout& r);

private:
  msg::group_start start_;
  clock::time_point t0_;
  std::vector<attempt_io> io_;
  msg::group_result counts_;
};

} // namespace leap::actors
