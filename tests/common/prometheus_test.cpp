// The Prometheus registry (common/prometheus.hpp): exposition text computed by hand for a
// counter with labels, a gauge, a histogram's cumulative buckets, label escaping, and samples of
// undeclared families being ignored.
#include "common/prometheus.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace leap;

TEST(Prometheus, CountersGaugesAndHistogramsInTheTextFormat) {
  prom::registry m;
  m.declare("req_total", "Requests.", prom::kind::counter);
  m.declare("depth", "Queue depth.", prom::kind::gauge);
  m.declare("lat_seconds", "Latency.", prom::kind::histogram, {0.1, 1});
  m.inc("req_total", {{"code", "200"}});
  m.inc("req_total", {{"code", "200"}}, 2);
  m.inc("req_total", {{"code", "429"}});
  m.set("depth", {}, 7);
  m.observe("lat_seconds", 0.05);
  m.observe("lat_seconds", 0.1); // le is inclusive
  m.observe("lat_seconds", 0.5);
  m.observe("lat_seconds", 3);
  m.inc("undeclared_total"); // ignored
  EXPECT_EQ(m.text(),
            "# HELP req_total Requests.\n"
            "# TYPE req_total counter\n"
            "req_total{code=\"200\"} 3\n"
            "req_total{code=\"429\"} 1\n"
            "# HELP depth Queue depth.\n"
            "# TYPE depth gauge\n"
            "depth 7\n"
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"0.1\"} 2\n"
            "lat_seconds_bucket{le=\"1\"} 3\n"
            "lat_seconds_bucket{le=\"+Inf\"} 4\n"
            "lat_seconds_sum 3.65\n"
            "lat_seconds_count 4\n");
  EXPECT_EQ(m.value("req_total", {{"code", "200"}}), 3);
  EXPECT_EQ(m.total("req_total"), 4);
  EXPECT_EQ(m.total("lat_seconds"), 4);
}

TEST(Prometheus, LabelValuesAreEscapedAndAnUnusedCounterShowsZero) {
  prom::registry m;
  m.declare("a_total", "A.", prom::kind::counter);
  m.declare("b_total", "B.", prom::kind::counter);
  m.inc("a_total", {{"why", "say \"hi\"\\\n"}});
  EXPECT_NE(m.text().find("a_total{why=\"say \\\"hi\\\"\\\\\\n\"} 1\n"), std::string::npos)
    << m.text();
  EXPECT_NE(m.text().find("b_total 0\n"), std::string::npos);
}

TEST(Prometheus, ManyThreadsCountWithoutLosingIncrements) {
  prom::registry m;
  m.declare("n_total", "N.", prom::kind::counter);
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        m.inc("n_total");
    });
  for (auto& t : ts)
    t.join();
  EXPECT_EQ(m.value("n_total"), 8000);
}
