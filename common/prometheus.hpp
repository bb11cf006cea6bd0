// A small Prometheus metrics registry: counters, gauges and histograms with labels, rendered in
// the text exposition format (version 0.0.4) that `GET /metrics` of `leap serve` answers. Each
// family is declared once (name, help, kind, histogram buckets); samples of an undeclared family
// are ignored, so a typo cannot break the output. Thread-safe: every member takes one mutex, so
// the HTTP threads and the service actor may record at once.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace leap::prom {

using labels = std::vector<std::pair<std::string, std::string>>;

enum class kind { counter, gauge, histogram };

class registry {
public:
  void declare(const std::string& name, const std::string& help, kind k,
               std::vector<double> buckets = {});

  void inc(const std::string& name, const labels& l = {}, double by = 1);
  void set(const std::string& name, const labels& l, double value);
  void observe(const std::string& name, double value, const labels& l = {});

  // The current value of a counter or gauge (0 when never recorded); for tests and reports.
  double value(const std::string& name, const labels& l = {}) const;
  // A counter's or gauge's values summed over all its labels (a histogram's count).
  double total(const std::string& name) const;

  // Every declared family, in declaration order, with its HELP and TYPE lines.
  std::string text() const;

private:
  struct histogram {
    std::vector<unsigned long long> counts; // per bucket (not cumulative) + one for +Inf
    double sum = 0;
    unsigned long long count = 0;
  };
  struct family {
    std::string name, help;
    kind k = kind::counter;
    std::vector<double> buckets;
    std::map<labels, double> values;
    std::map<labels, histogram> histograms;
  };
  family* find(const std::string& name);
  const family* find(const std::string& name) const;

  mutable std::mutex mu_;
  std::vector<family> families_;
};

// The label value escaped as the format wants (backslash, double quote, newline).
std::string escape_label(const std::string& v);

} // namespace leap::prom
