#include "algo/metrics.hpp"

namespace leap::algo {

double acc_at_k(const std::vector<group_record>& groups, int k) {
  long long n = 0, ok = 0;
  for (auto& g : groups)
    for (int t : g.solved_turn) {
      ++n;
      ok += t > 0 && t <= k;
    }
  return n ? static_cast<double>(ok) / static_cast<double>(n) : 0;
}

double turns_per_pass(const std::vector<group_record>& groups) {
  long long n = 0, sum = 0;
  for (auto& g : groups)
    for (int t : g.solved_turn)
      if (t > 0) {
        ++n;
        sum += t;
      }
  return n ? static_cast<double>(sum) / static_cast<double>(n) : 0;
}

double activated_fraction(const std::vector<group_record>& groups) {
  if (groups.empty())
    return 0;
  long long a = 0;
  for (auto& g : groups)
    a += g.activated;
  return static_cast<double>(a) / static_cast<double>(groups.size());
}

std::vector<double> per_group_recovery(const std::vector<group_record>& groups) {
  std::vector<double> out;
  for (auto& g : groups) {
    int failed_first = 0, recovered = 0;
    for (int t : g.solved_turn) {
      if (t != 1) {
        ++failed_first;
        recovered += t > 1;
      }
    }
    out.push_back(g.activated && failed_first > 0
                    ? static_cast<double>(recovered) / failed_first
                    : -1.0);
  }
  return out;
}

double mean_recovery(const std::vector<group_record>& groups) {
  double s = 0;
  int n = 0;
  for (double r : per_group_recovery(groups))
    if (r >= 0) {
      s += r;
      ++n;
    }
  return n ? s / n : 0;
}

} // namespace leap::algo
