// Difficulty-Conditioned Pruning (docs/design.md "Difficulty-Conditioned Pruning"): after
// turn 1 of a GRPO group, count its failures N_fail; expand the failed attempts to the next turn
// only when T_min <= N_fail <= T_max, else prune the group (too easy, or hopeless). The
// decision is taken as soon as the verdicts already in make it certain, so expansion can start
// before the group's stragglers finish.
// Pure functions, no I/O; any thread.
#pragma once

namespace leap::algo {

// Thresholds as given in TOML: absolute counts, or fractions of the group size G.
struct dcp_config {
  double t_min = 0.5;     // paper's best setting: debug only groups with N_fail >= G/2
  double t_max = 1.0;     // ... and every such group (no "hopeless" pruning)
  bool fractional = true; // true: t_min/t_max are fractions of G; false: absolute counts
  bool enabled = true;    // false: every group with a failure is expanded (unpruned multi-turn)
};

// Inclusive integer bounds on N_fail for one group size.
struct dcp_bounds {
  int t_min = 0;
  int t_max = 0;
};

// Fractions round up for t_min (N_fail >= 0.5 * 7 means N_fail >= 4) and down for t_max.
dcp_bounds resolve(const dcp_config& cfg, int group_size);

enum class dcp_decision { undecided, expand, prune_easy, prune_hopeless };
const char* to_string(dcp_decision d);

// `failed` and `passed` turn-1 verdicts are in; the rest of the group is pending.
// With DCP disabled: expand as soon as one attempt failed; prune_easy only when all passed.
dcp_decision decide(const dcp_config& cfg, int group_size, int failed, int passed);

} // namespace leap::algo
