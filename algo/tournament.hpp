// The rank-based tournament inside one GRPO group (DESIGN.md "Rank-based reward"): every
// trajectory plays every other. Order: solved on turn 1 > solved on turn 2 > ... > unsolved;
// ties broken by configurable keys in order: speedup (when both are measured; higher wins if
// it beats the other by more than a relative margin), then total tokens (fewer wins, with a
// relative margin). Reward_i = (wins_i - losses_i) / (G - 1), in [-1, 1], summing to 0.
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

struct tournament_config {
  std::vector<tie_key> tie_keys{tie_key::speedup, tie_key::tokens};
  double speedup_margin = 0.05; // a is faster if speedup_a > speedup_b * (1 + margin)
  double tokens_margin = 0.10;  // a is shorter if tokens_a * (1 + margin) < tokens_b
};

// +1 if a beats b, -1 if b beats a, 0 for a draw.
int compare(const trajectory_outcome& a, const trajectory_outcome& b, const tournament_config& cfg);

struct tournament_result {
  std::vector<int> wins, losses, draws;
  std::vector<double> rewards; // (wins - losses) / (G - 1); all 0 for G < 2
};

tournament_result play(const std::vector<trajectory_outcome>& group, const tournament_config& cfg);

} // namespace leap::algo
