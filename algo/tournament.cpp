#include "algo/tournament.hpp"

namespace leap::algo {

const char* to_string(tie_key k) {
  switch (k) {
    case tie_key::speedup: return "speedup";
    case tie_key::tokens: return "tokens";
  }
  return "?";
}

bool parse_tie_key(const std::string& text, tie_key& out) {
  for (auto k : {tie_key::speedup, tie_key::tokens})
    if (text == to_string(k)) {
      out = k;
      return true;
    }
  return false;
}

namespace {
// Larger is better: turn 1 best, unsolved worst.
int solve_rank(const trajectory_outcome& t) { return t.solved_turn > 0 ? -t.solved_turn : -1000000; }
} // namespace

int compare(const trajectory_outcome& a, const trajectory_outcome& b, const tournament_config& cfg) {
  int ra = solve_rank(a), rb = solve_rank(b);
  if (ra != rb)
    return ra > rb ? 1 : -1;
  // Unsolved trajectories draw with each other: no tie key ranks two failures.
  if (a.solved_turn == 0)
    return 0;
  for (auto key : cfg.tie_keys) {
    if (key == tie_key::speedup) {
      // Only between trajectories that both have a measurement.
      if (!a.timed || !b.timed)
        continue;
      if (a.speedup > b.speedup * (1 + cfg.speedup_margin))
        return 1;
      if (b.speedup > a.speedup * (1 + cfg.speedup_margin))
        return -1;
    } else {
      double ta = static_cast<double>(a.total_tokens), tb = static_cast<double>(b.total_tokens);
      if (ta * (1 + cfg.tokens_margin) < tb)
        return 1;
      if (tb * (1 + cfg.tokens_margin) < ta)
        return -1;
    }
  }
  return 0;
}

tournament_result play(const std::vector<trajectory_outcome>& g, const tournament_config& cfg) {
  tournament_result r;
  auto n = g.size();
  r.wins.assign(n, 0);
  r.losses.assign(n, 0);
  r.draws.assign(n, 0);
  r.rewards.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      int c = compare(g[i], g[j], cfg);
      if (c > 0) {
        ++r.wins[i];
        ++r.losses[j];
      } else if (c < 0) {
        ++r.wins[j];
        ++r.losses[i];
      } else {
        ++r.draws[i];
        ++r.draws[j];
      }
    }
  if (n >= 2)
    for (std::size_t i = 0; i < n; ++i)
      r.rewards[i] = static_cast<double>(r.wins[i] - r.losses[i]) / static_cast<double>(n - 1);
  return r;
}

} // namespace leap::algo
