// The rank-based tournament inside one GRPO group (docs/design.md "The reward"): every ranked
// trajectory plays every other. Order: solved on turn 1 > solved on turn 2 > ... > unsolved.
// Between two trajectories solved on the same turn, configurable tie keys in order: speedup
// (only when both were timed; higher wins if it beats the other by more than a relative
// margin), then total tokens (fewer wins, with a relative margin). Unsolved trajectories draw
// with each other. Reward_i = (wins_i - losses_i) / (n - 1) over the n trajectories played, in
// [-1, 1], summing to 0; n <= 1 gives 0. The caller leaves out what is not ranked (attempts
// lost to the infrastructure or not buildable by the emulation: algo/rollout.hpp).
// Pure functions, no I/O; any thread.
#pragma once

#include <string>
#include <vector>

namespace leap::algo {

struct trajectory_outcome {
  int solved_turn = 0;       // 1-based turn of the first correct attempt; 0 = never solved
  bool timed = false;        // a speedup was measured (GPU backend, correct attempt)
  double speedup = 0;        // reference time / candidate time of the solving attempt
  long long total_tokens = 0; // completion tokens over all turns
};

enum class tie_key { speedup, tokens };
const char* to_string(tie_key k);
bool parse_tie_key(const std::string& text, tie_key& out);

struct tournament_config {
  std::vector<tie_key> tie_keys{tie_key::speedup, tie_key::tokens};
  double speedup_margin = 0.05; // a is faster if speedup_a > speedup_b * (1 + margin)
  double tokens_margin = 0.10;  // a is shorter if tokens_a * (1 + margin) < tokens_b
};

// +1 if a beats b, -1 if b beats a, 0 for a draw.
int compare(const trajectory_outcome& a, const trajectory_outcome& b, const tournament_config& cfg);

struct tournament_result {
  std::vector<int> wins, losses, draws;
  std::vector<double> rewards; // (wins - losses) / (n - 1); all 0 for n < 2
};

tournament_result play(const std::vector<trajectory_outcome>& group, const tournament_config& cfg);

} // namespace leap::algo
