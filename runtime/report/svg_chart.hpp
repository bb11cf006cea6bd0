// Line charts as inline SVG text for `leap report`: axes with "nice" ticks, one polyline per
// series (NaN y values break a line) with an optional shaded interval band, a legend. Pure string building, no I/O; any thread may
// call these functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leap::report {

struct series {
  std::string label;
  std::vector<double> x, y; // same length; y may hold NaN for "no value at this x"
  int color = 0;            // index into palette()
  int dash = 0;             // 0 solid, 1 dashed, 2 dotted
  // An interval band around the line (e.g. a 95% interval over seeds), shaded in the line's
  // colour: lo and hi parallel to x, or both empty for none. Points where either is NaN have no
  // band (a line from one seed); a band stops at the chart's fixed y_min / y_max.
  std::vector<double> lo, hi;
};

struct chart {
  std::string title;
  std::string x_label, y_label;
  std::vector<series> lines;
  std::optional<double> y_min, y_max; // fixed axis ends (e.g. 0 and 1 for rates)
};

// Colours for runs, distinguishable in print and for common colour-vision deficiencies.
const std::vector<std::string>& palette();

// Tick positions covering [lo, hi] with a 1/2/5 x 10^k step, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// A tick label: no more decimals than the step needs ("0.25", "1.5k" never; plain numbers).
std::string format_tick(double v, double step);

// The chart as one <svg> element of the given size (pixels).
std::string render_svg(const chart& c, int width = 440, int height = 250);

} // namespace leap::report
