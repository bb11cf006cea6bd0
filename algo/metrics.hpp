// The paper's metrics over finished groups: Acc@k (cumulative pass rate by turn), turns per
// pass, activated groups %, per-group recovery. Pure functions, no I/O; any thread.
#pragma once

#include <vector>

namespace leap::algo {

struct group_record {
  std::vector<int> solved_turn; // per trajectory: 1-based turn of the first pass, 0 = unsolved
  bool activated = false;       // DCP expanded it to further turns
};

// Fraction of all trajectories solved at turn <= k.
double acc_at_k(const std::vector<group_record>& groups, int k);
// Mean solving turn over solved trajectories (0 when none solved).
double turns_per_pass(const std::vector<group_record>& groups);
// Fraction of groups DCP activated.
double activated_fraction(const std::vector<group_record>& groups);
// For each activated group: of its trajectories that failed turn 1, the fraction solved later;
// -1 for groups that were not activated or had no turn-1 failure.
std::vector<double> per_group_recovery(const std::vector<group_record>& groups);
// Mean of per_group_recovery over the activated groups that had turn-1 failures (0 if none).
double mean_recovery(const std::vector<group_record>& groups);

} // namespace leap::algo
