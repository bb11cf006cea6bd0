// Statistics over the seeds of an arm, for `leap report --by-arm` and `leap experiment`: the mean
// with a two-sided 95% Student t interval, and a chart line that is the mean of several runs'
// curves point by point with that interval as its band. Arithmetic only; any thread may call
// these functions.
#pragma once

#include "runtime/report/svg_chart.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace leap::report {

// Two-sided 95% Student t quantile for `df` degrees of freedom (df >= 1; NaN below).
double t95(int df);

struct interval {
  int n = 0;
  double mean = 0;
  std::optional<double> half_width; // t95(n-1) * s / sqrt(n), s the sample deviation; none for n < 2
};
// None for no values.
std::optional<interval> mean_interval(const std::vector<double>& xs);

// One line from several runs' points (x, y), e.g. one arm's seeds: point i is the mean of every
// run's i-th point (x and y alike) over the runs where both are finite, its band the 95%
// interval of those y values (NaN, no band, where fewer than two runs have one; a gap where none
// has).
series mean_series(const std::string& label, int colour,
                   const std::vector<std::vector<std::pair<double, double>>>& runs);

} // namespace leap::report
