#include "common/prometheus.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace leap::prom {

namespace {

std::string number(double v) {
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v))
    return "NaN";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string render_labels(const labels& l, const std::string& extra_key = {},
                          const std::string& extra_value = {}) {
  if (l.empty() && extra_key.empty())
    return {};
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : l) {
    out += (first ? "" : ",") + k + "=\"" + escape_label(v) + "\"";
    first = false;
  }
  if (!extra_key.empty())
    out += (first ? "" : ",") + extra_key + "=\"" + extra_value + "\"";
  return out + "}";
}

const char* kind_name(kind k) {
  switch (k) {
    case kind::counter: return "counter";
    case kind::gauge: return "gauge";
    case kind::histogram: return "histogram";
  }
  return "untyped";
}

} // namespace

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void registry::declare(const std::string& name, const std::string& help, kind k,
                       std::vector<double> buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : families_)
    if (f.name == name)
      return;
  std::sort(buckets.begin(), buckets.end());
  family f;
  f.name = name;
  f.help = help;
  f.k = k;
  f.buckets = std::move(buckets);
  families_.push_back(std::move(f));
}

registry::family* registry::find(const std::string& name) {
  for (auto& f : families_)
    if (f.name == name)
      return &f;
  return nullptr;
}

const registry::family* registry::find(const std::string& name) const {
  for (const auto& f : families_)
    if (f.name == name)
      return &f;
  return nullptr;
}

void registry::inc(const std::string& name, const labels& l, double by) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto* f = find(name); f && f->k != kind::histogram)
    f->values[l] += by;
}

void registry::set(const std::string& name, const labels& l, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto* f = find(name); f && f->k != kind::histogram)
    f->values[l] = value;
}

void registry::observe(const std::string& name, double value, const labels& l) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* f = find(name);
  if (!f || f->k != kind::histogram)
    return;
  auto& h = f->histograms[l];
  h.counts.resize(f->buckets.size() + 1, 0);
  auto at = std::lower_bound(f->buckets.begin(), f->buckets.end(), value) - f->buckets.begin();
  ++h.counts[static_cast<std::size_t>(at)];
  h.sum += value;
  ++h.count;
}

double registry::value(const std::string& name, const labels& l) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto* f = find(name);
  if (!f)
    return 0;
  if (f->k == kind::histogram) {
    auto it = f->histograms.find(l);
    return it == f->histograms.end() ? 0 : static_cast<double>(it->second.count);
  }
  auto it = f->values.find(l);
  return it == f->values.end() ? 0 : it->second;
}

double registry::total(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto* f = find(name);
  double sum = 0;
  if (!f)
    return sum;
  for (const auto& [l, v] : f->values)
    sum += v;
  for (const auto& [l, h] : f->histograms)
    sum += static_cast<double>(h.count);
  return sum;
}

std::string registry::text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& f : families_) {
    out += "# HELP " + f.name + " " + f.help + "\n";
    out += "# TYPE " + f.name + " " + kind_name(f.k) + "\n";
    if (f.k != kind::histogram) {
      if (f.values.empty() && f.k == kind::counter)
        out += f.name + " 0\n";
      for (const auto& [l, v] : f.values)
        out += f.name + render_labels(l) + " " + number(v) + "\n";
      continue;
    }
    for (const auto& [l, h] : f.histograms) {
      unsigned long long cum = 0;
      for (std::size_t b = 0; b < f.buckets.size(); ++b) {
        cum += h.counts[b];
        out += f.name + "_bucket" + render_labels(l, "le", number(f.buckets[b])) + " "
               + number(static_cast<double>(cum)) + "\n";
      }
      cum += h.counts.back();
      out += f.name + "_bucket" + render_labels(l, "le", "+Inf") + " "
             + number(static_cast<double>(cum)) + "\n";
      out += f.name + "_sum" + render_labels(l) + " " + number(h.sum) + "\n";
      out += f.name + "_count" + render_labels(l) + " " + number(static_cast<double>(h.count))
             + "\n";
    }
  }
  return out;
}

} // namespace leap::prom
