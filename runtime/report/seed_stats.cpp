// t95, mean_interval and mean_series: see seed_stats.hpp.
#include "runtime/report/seed_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace leap::report {

double t95(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                                 2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
                                 2.093,  2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
                                 2.048,  2.045, 2.042};
  if (df < 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (df <= 30)
    return table[df - 1];
  if (df <= 40)
    return 2.021;
  if (df <= 60)
    return 2.000;
  if (df <= 120)
    return 1.980;
  return 1.960;
}

std::optional<interval> mean_interval(const std::vector<double>& xs) {
  if (xs.empty())
    return std::nullopt;
  interval iv;
  iv.n = static_cast<int>(xs.size());
  for (double x : xs)
    iv.mean += x;
  iv.mean /= iv.n;
  if (iv.n >= 2) {
    double ss = 0;
    for (double x : xs)
      ss += (x - iv.mean) * (x - iv.mean);
    iv.half_width = t95(iv.n - 1) * std::sqrt(ss / (iv.n - 1)) / std::sqrt(double(iv.n));
  }
  return iv;
}

series mean_series(const std::string& label, int colour,
                   const std::vector<std::vector<std::pair<double, double>>>& runs) {
  series sr;
  sr.label = label;
  sr.color = colour;
  std::size_t n = 0;
  for (auto& pts : runs)
    n = std::max(n, pts.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> xs, ys;
    for (auto& pts : runs)
      if (i < pts.size() && std::isfinite(pts[i].first) && std::isfinite(pts[i].second)) {
        xs.push_back(pts[i].first);
        ys.push_back(pts[i].second);
      }
    const auto x = mean_interval(xs);
    const auto y = mean_interval(ys);
    if (!x || !y) { // no run has a value here: a gap in the line
      for (auto* v : {&sr.x, &sr.y, &sr.lo, &sr.hi})
        v->push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    sr.x.push_back(x->mean);
    sr.y.push_back(y->mean);
    const double half = y->half_width ? *y->half_width : std::numeric_limits<double>::quiet_NaN();
    sr.lo.push_back(y->mean - half);
    sr.hi.push_back(y->mean + half);
  }
  return sr;
}

} // namespace leap::report
