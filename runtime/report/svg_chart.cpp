// render_svg and its helpers: see svg_chart.hpp.
#include "runtime/report/svg_chart.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace leap::report {

const std::vector<std::string>& palette() {
  // Okabe-Ito, then two darker extras.
  static const std::vector<std::string> p{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                          "#E69F00", "#56B4E9", "#000000", "#8C564B"};
  return p;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) {
    hi = lo + 1;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::string format_tick(double v, double step) {
  int decimals = 0;
  if (step > 0 && step < 1)
    decimals = std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  return format_fixed(v, decimals);
}

namespace {

std::string num(double v) { return format_fixed(v, 1); }

} // namespace

std::string render_svg(const chart& c, int width, int height) {
  // Plot area inside margins: left for y ticks, bottom for x ticks, top for the title, right for
  // breathing room; the legend goes under the x label.
  // Legend columns fit the longest label (about 6.2 px per character at 11 px, plus the swatch).
  const double left = 52, right = 12, top = 26;
  std::size_t longest = 1;
  for (auto& s : c.lines)
    longest = std::max(longest, s.label.size());
  const int legend_cols = std::max(
    1, std::min(3, static_cast<int>((width - left - right) / (6.2 * static_cast<double>(longest) + 34))));
  const int legend_rows =
    static_cast<int>((c.lines.size() + static_cast<std::size_t>(legend_cols) - 1) /
                     static_cast<std::size_t>(legend_cols));
  const double bottom = 40 + 16.0 * legend_rows;
  const double pw = width - left - right, ph = height - top - bottom;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  double ylo = xlo, yhi = -xlo;
  // A band stops at the axis' fixed ends (a rate's interval beyond [0, 1] means nothing).
  auto band_edge = [&](double v) {
    if (c.y_min)
      v = std::max(v, *c.y_min);
    if (c.y_max)
      v = std::min(v, *c.y_max);
    return v;
  };
  for (auto& s : c.lines)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]))
        continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
      if (i < s.lo.size() && i < s.hi.size() && std::isfinite(s.lo[i]) && std::isfinite(s.hi[i])) {
        ylo = std::min(ylo, band_edge(s.lo[i]));
        yhi = std::max(yhi, band_edge(s.hi[i]));
      }
    }
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                  std::to_string(width) + " " + std::to_string(height) +
                  "\" role=\"img\" aria-label=\"" + escape_xml(c.title) + "\">\n";
  o += "<text x=\"" + num(left) + "\" y=\"16\" class=\"t\">" + escape_xml(c.title) + "</text>\n";
  if (!std::isfinite(xlo)) {
    o += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(top + ph / 2) +
         "\" text-anchor=\"middle\" class=\"n\">no data</text>\n</svg>\n";
    return o;
  }
  if (c.y_min)
    ylo = std::min(ylo, *c.y_min);
  if (c.y_max)
    yhi = std::max(yhi, *c.y_max);
  if (yhi - ylo < 1e-12) {
    // A flat line: from the fixed lower end when there is one (a KL of 0 reads 0..1), else
    // centred on the value.
    if (c.y_min) {
      yhi = ylo + std::max(1.0, std::abs(ylo));
    } else {
      ylo -= 0.5;
      yhi += 0.5;
    }
  }
  if (xhi - xlo < 1e-12) {
    xlo -= 0.5;
    xhi += 0.5;
  }
  auto yt = nice_ticks(ylo, yhi, 5);
  auto xt = nice_ticks(xlo, xhi, 6);
  // Axis ends snap outwards to the ticks so every line stays inside.
  ylo = std::min(ylo, yt.front());
  yhi = std::max(yhi, yt.back());
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
  const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  auto X = [&](double v) { return left + (v - xlo) / (xhi - xlo) * pw; };
  auto Y = [&](double v) { return top + ph - (v - ylo) / (yhi - ylo) * ph; };
  for (double v : yt) {
    if (v < ylo - 1e-12 || v > yhi + 1e-12)
      continue;
    o += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(Y(v)) +
         "\" y2=\"" + num(Y(v)) + "\" class=\"g\"/>";
    o += "<text x=\"" + num(left - 5) + "\" y=\"" + num(Y(v) + 4) +
         "\" text-anchor=\"end\" class=\"k\">" + format_tick(v, ystep) + "</text>\n";
  }
  for (double v : xt) {
    if (v < xlo - 1e-12 || v > xhi + 1e-12)
      continue;
    o += "<line x1=\"" + num(X(v)) + "\" x2=\"" + num(X(v)) + "\" y1=\"" + num(top + ph) +
         "\" y2=\"" + num(top + ph + 4) + "\" class=\"a\"/>";
    o += "<text x=\"" + num(X(v)) + "\" y=\"" + num(top + ph + 16) +
         "\" text-anchor=\"middle\" class=\"k\">" + format_tick(v, xstep) + "</text>\n";
  }
  o += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" +
       num(ph) + "\" class=\"f\"/>\n";
  o += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(top + ph + 30) +
       "\" text-anchor=\"middle\" class=\"k\">" + escape_xml(c.x_label) + "</text>\n";
  o += "<text transform=\"translate(12," + num(top + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" class=\"k\">" + escape_xml(c.y_label) + "</text>\n";
  static const char* dashes[] = {"", " stroke-dasharray=\"6 3\"", " stroke-dasharray=\"2 3\""};
  // Bands first, under every line: one polygon per run of points that have a band (hi along
  // the points, then lo back).
  for (auto& s : c.lines) {
    const std::size_t n = std::min({s.x.size(), s.y.size(), s.lo.size(), s.hi.size()});
    const auto& colour = palette()[static_cast<std::size_t>(s.color) % palette().size()];
    std::size_t i = 0;
    while (i < n) {
      auto banded = [&](std::size_t k) {
        return std::isfinite(s.x[k]) && std::isfinite(s.lo[k]) && std::isfinite(s.hi[k]);
      };
      if (!banded(i)) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < n && banded(j))
        ++j;
      if (j - i >= 2) {
        std::string pts;
        for (std::size_t k = i; k < j; ++k)
          pts += (pts.empty() ? "" : " ") + num(X(s.x[k])) + "," + num(Y(band_edge(s.hi[k])));
        for (std::size_t k = j; k-- > i;)
          pts += " " + num(X(s.x[k])) + "," + num(Y(band_edge(s.lo[k])));
        o += "<polygon fill=\"" + colour + "\" fill-opacity=\"0.15\" stroke=\"none\" points=\"" +
             pts + "\"/>\n";
      } else { // a lone point: an error bar
        o += "<line x1=\"" + num(X(s.x[i])) + "\" x2=\"" + num(X(s.x[i])) + "\" y1=\"" +
             num(Y(band_edge(s.lo[i]))) + "\" y2=\"" + num(Y(band_edge(s.hi[i]))) + "\" stroke=\"" + colour +
             "\" stroke-opacity=\"0.5\" stroke-width=\"3\"/>\n";
      }
      i = j;
    }
  }
  for (auto& s : c.lines) {
    const auto& colour = palette()[static_cast<std::size_t>(s.color) % palette().size()];
    const char* dash = dashes[std::clamp(s.dash, 0, 2)];
    std::string pts;
    std::size_t count = 0;
    auto flush = [&] {
      if (count >= 2)
        o += "<polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.8\"" + dash +
             " points=\"" + pts + "\"/>\n";
      pts.clear();
      count = 0;
    };
    const std::size_t n = std::min(s.x.size(), s.y.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        flush();
        continue;
      }
      pts += (pts.empty() ? "" : " ") + num(X(s.x[i])) + "," + num(Y(s.y[i]));
      ++count;
      // Points as dots while they are few enough to see (and a lone point is visible at all).
      if (n <= 60)
        o += "<circle cx=\"" + num(X(s.x[i])) + "\" cy=\"" + num(Y(s.y[i])) + "\" r=\"2.2\" fill=\"" +
             colour + "\"/>";
    }
    flush();
  }
  // Legend: legend_cols entries per row under the x label.
  const auto cols = static_cast<std::size_t>(legend_cols);
  for (std::size_t i = 0; i < c.lines.size(); ++i) {
    const auto& s = c.lines[i];
    const double lx = left + static_cast<double>(i % cols) * (pw / static_cast<double>(cols));
    const double ly = top + ph + 46 + 16.0 * static_cast<double>(i / cols);
    const auto& colour = palette()[static_cast<std::size_t>(s.color) % palette().size()];
    o += "<line x1=\"" + num(lx) + "\" x2=\"" + num(lx + 18) + "\" y1=\"" + num(ly - 4) + "\" y2=\"" +
         num(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
         dashes[std::clamp(s.dash, 0, 2)] + "/>";
    o += "<text x=\"" + num(lx + 22) + "\" y=\"" + num(ly) + "\" class=\"k\">" + escape_xml(s.label) +
         "</text>\n";
  }
  o += "</svg>\n";
  return o;
}

} // namespace leap::report
