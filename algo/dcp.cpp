#include "algo/dcp.hpp"

#include <cmath>

namespace leap::algo {

dcp_bounds resolve(const dcp_config& cfg, int g) {
  dcp_bounds b;
  if (cfg.fractional) {
    // A small epsilon keeps exact products (0.5 * 8 = 4) from rounding the wrong way.
    b.t_min = static_cast<int>(std::ceil(cfg.t_min * g - 1e-9));
    b.t_max = static_cast<int>(std::floor(cfg.t_max * g + 1e-9));
  } else {
    b.t_min = static_cast<int>(std::ceil(cfg.t_min - 1e-9));
    b.t_max = static_cast<int>(std::floor(cfg.t_max + 1e-9));
  }
  if (b.t_min < 0)
    b.t_min = 0;
  if (b.t_max > g)
    b.t_max = g;
  return b;
}

const char* to_string(dcp_decision d) {
  switch (d) {
    case dcp_decision::undecided: return "undecided";
    case dcp_decision::expand: return "expand";
    case dcp_decision::prune_easy: return "prune_easy";
    case dcp_decision::prune_hopeless: return "prune_hopeless";
  }
  return "?";
}

dcp_decision decide(const dcp_config& cfg, int g, int failed, int passed) {
  int pending = g - failed - passed;
  if (pending < 0)
    pending = 0;
  int lo = failed;           // N_fail if every pending attempt passes
  int hi = failed + pending; // N_fail if every pending attempt fails
  if (!cfg.enabled) {
    if (failed > 0)
      return dcp_decision::expand;
    return pending == 0 ? dcp_decision::prune_easy : dcp_decision::undecided;
  }
  auto b = resolve(cfg, g);
  if (hi < b.t_min)
    return dcp_decision::prune_easy;
  if (lo > b.t_max)
    return dcp_decision::prune_hopeless;
  if (lo >= b.t_min && hi <= b.t_max)
    return dcp_decision::expand;
  return dcp_decision::undecided;
}

} // namespace leap::algo
