// `leap report` without processes: tick arithmetic by hand, SVG lines (NaN breaks one), the
// metrics reader's errors and torn-line rule, and a page over two runs that needs nothing from
// outside.
#include "common/fs.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/report/seed_stats.hpp"
#include "runtime/report/svg_chart.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>
#include <utility>

using namespace leap;
using namespace leap::report;
namespace fs = std::filesystem;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size()))
    ++n;
  return n;
}

std::string line(int step, double acc1, const char* recovery, double seconds) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"step\":%d,\"acc_at_1\":%g,\"acc_at_2\":%g,\"acc_at_3\":%g,\"turns_per_pass\":1.5,"
                "\"activated_groups\":0.5,\"recovery\":%s,\"compiles\":10,\"cache_hits\":6,"
                "\"compiles_later_turns\":4,\"attempts\":16,\"step_seconds\":%g,\"loss\":0.1,"
                "\"kl\":0.01,\"clip_fraction\":0.02,\"grad_norm\":0.3,\"util_generate\":0.9,"
                "\"util_compile\":0.4,\"util_execute\":0.2,\"outcome\":\"trained\"}\n",
                step, acc1, acc1 + 0.1, acc1 + 0.15, recovery, seconds);
  return buf;
}

struct temp_runs {
  std::string root = *make_temp_dir(temp_root(), "leap-report-");
  ~temp_runs() { fs::remove_all(root); }
  std::string add(const std::string& name, const std::string& metrics) {
    auto dir = root + "/" + name;
    fs::create_directories(dir);
    std::ofstream(dir + "/metrics.jsonl") << metrics;
    return dir;
  }
};

} // namespace

TEST(ReportTicks, NiceStepsByHand) {
  // [0, 1] in about 5 steps: 0.2.
  auto t = nice_ticks(0, 1, 5);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_DOUBLE_EQ(t[1], 0.2);
  EXPECT_DOUBLE_EQ(t[5], 1.0);
  // [0, 7.3]: raw 1.46 -> step 2: 0, 2, 4, 6.
  t = nice_ticks(0, 7.3, 5);
  EXPECT_EQ(t, (std::vector<double>{0, 2, 4, 6}));
  // [3, 47] in about 6: raw 7.33 -> step 10: 10, 20, 30, 40.
  t = nice_ticks(3, 47, 6);
  EXPECT_EQ(t, (std::vector<double>{10, 20, 30, 40}));
  // A flat range still gets ticks.
  EXPECT_FALSE(nice_ticks(2, 2, 5).empty());
  EXPECT_EQ(format_tick(0.25, 0.05), "0.25");
  EXPECT_EQ(format_tick(1, 0.2), "1.0");
  EXPECT_EQ(format_tick(40, 10), "40");
}

TEST(ReportSvg, OnePolylinePerSeriesAndNanBreaksALine) {
  chart c;
  c.title = "t <1>";
  c.lines.push_back({"a", {1, 2, 3}, {0.1, 0.2, 0.3}, 0, 0, {}, {}});
  c.lines.push_back({"b", {1, 2, 3, 4, 5}, {0.5, 0.4, NAN, 0.2, 0.1}, 1, 1, {}, {}});
  auto svg = render_svg(c);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 3u) << "b is cut in two by its NaN";
  EXPECT_NE(svg.find("t &lt;1&gt;"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray=\"6 3\""), std::string::npos);
  EXPECT_EQ(count(svg, "<circle"), 7u) << "3 + 4 finite points";
  chart empty;
  empty.title = "nothing";
  EXPECT_NE(render_svg(empty).find("no data"), std::string::npos);
}

TEST(ReportSvg, BandsUnderTheLinesCutWhereTheyHaveNoInterval) {
  chart c;
  c.y_min = 0.0;
  c.y_max = 1.0;
  series a{"a", {1, 2, 3, 4, 5}, {0.5, 0.5, 0.5, 0.5, 0.5}, 2, 0, {}, {}};
  a.lo = {0.4, 0.3, NAN, 0.45, 0.2};
  a.hi = {0.6, 0.7, NAN, 0.55, 0.8};
  c.lines.push_back(a);
  series b{"b", {1}, {0.9}, 1, 0, {}, {}};
  b.lo = {0.85};
  b.hi = {0.95};
  c.lines.push_back(b);
  c.lines.push_back({"no band", {1, 2}, {0.1, 0.2}, 0, 0, {}, {}});
  auto svg = render_svg(c);
  // a: points 1-2 and 4-5 are two polygons (3 has no interval); b's lone point is an error bar.
  EXPECT_EQ(count(svg, "<polygon"), 2u);
  EXPECT_EQ(count(svg, "fill-opacity=\"0.15\""), 2u);
  EXPECT_EQ(count(svg, "stroke-opacity=\"0.5\""), 1u);
  // The bands lie under the lines: every polygon comes before the first polyline.
  EXPECT_LT(svg.rfind("<polygon"), svg.find("<polyline"));
  // A band stops at the fixed axis ends: an interval past 1 or below 0 does not stretch the axis.
  chart wide = c;
  wide.lines[0].hi[4] = 1.8;
  wide.lines[0].lo[0] = -0.6;
  auto clipped = render_svg(wide);
  EXPECT_NE(clipped.find(">1.0</text>"), std::string::npos);
  EXPECT_EQ(clipped.find(">1.5</text>"), std::string::npos);
  EXPECT_EQ(clipped.find(">2.0</text>"), std::string::npos);
  EXPECT_EQ(clipped.find(">-0.5</text>"), std::string::npos);
  // A band's colour is its line's.
  const auto& pal = palette();
  EXPECT_NE(svg.find("<polygon fill=\"" + pal[2] + "\""), std::string::npos);
}

TEST(ReportRuns, ReaderNamesFileLineAndFieldAndSkipsATornLastLine) {
  temp_runs t;
  auto ok = t.add("ok", line(1, 0.25, "null", 10) + line(2, 0.5, "0.5", 20) + "{\"step\":3,\"acc");
  auto r = load_run(ok);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->name, "ok");
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_FALSE(r->steps[0].recovery.has_value());
  EXPECT_DOUBLE_EQ(*r->steps[1].recovery, 0.5);
  EXPECT_EQ(r->wall_seconds, (std::vector<double>{10, 30}));
  // 10 real compiles + 6 hits = 16 requests, 4 of them in later turns.
  EXPECT_EQ(r->steps[0].compile_requests_turn1(), 12);
  EXPECT_EQ(r->compile_requests_spent, (std::vector<long long>{16, 32}));
  EXPECT_NE(r->warning.find("metrics.jsonl:3: skipped a torn last line"), std::string::npos);
  auto bad = t.add("bad", line(1, 0.25, "null", 10) + "not json\n" + line(3, 0.5, "null", 10));
  r = load_run(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find(bad + "/metrics.jsonl:2: not JSON"), std::string::npos) << r.message();
  auto typed = t.add("typed", "{\"step\":1,\"acc_at_1\":\"high\"}\n");
  r = load_run(typed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("metrics.jsonl:1: field acc_at_1: expected a number"), std::string::npos)
    << r.message();
  r = load_run(t.root + "/missing");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("not a leap train run directory"), std::string::npos);
}

TEST(ReportRuns, ArmPointsTakeTheArmsRunsThatHavePoints) {
  // Three runs, arms 0, 1, 0; the point at step i is (compile requests spent, Acc@1), or none
  // where Acc@1 is below 0.3.
  temp_runs t;
  std::vector<run_data> runs;
  for (auto [name, a, b] : {std::tuple{"a", 0.25, 0.5}, std::tuple{"b", 0.75, 0.75},
                            std::tuple{"c", 0.1, 0.2}}) {
    auto r = load_run(t.add(name, line(1, a, "null", 10) + line(2, b, "null", 10)));
    ASSERT_TRUE(r.ok()) << r.message();
    runs.push_back(*r);
  }
  auto point = [](const run_data& r, std::size_t i) -> std::optional<std::pair<double, double>> {
    if (r.steps[i].acc_at_1 < 0.3)
      return std::nullopt;
    return std::make_pair(double(r.compile_requests_spent[i]), r.steps[i].acc_at_1);
  };
  const std::vector<int> arm_of_run{0, 1, 0};
  // Arm 0: run a keeps its second step only; run c has no point and is left out.
  auto arm0 = arm_points(runs, arm_of_run, 0, point);
  ASSERT_EQ(arm0.size(), 1u);
  EXPECT_EQ(arm0[0], (std::vector<std::pair<double, double>>{{32.0, 0.5}}));
  auto arm1 = arm_points(runs, arm_of_run, 1, point);
  ASSERT_EQ(arm1.size(), 1u);
  EXPECT_EQ(arm1[0], (std::vector<std::pair<double, double>>{{16.0, 0.75}, {32.0, 0.75}}));
  EXPECT_TRUE(arm_points(runs, arm_of_run, 2, point).empty());
}

TEST(ReportPage, TwoRunsInOneSelfContainedPage) {
  temp_runs t;
  auto a = t.add("leap-arm", line(1, 0.25, "null", 30) + line(2, 0.5, "0.5", 30) + line(3, 0.75, "1", 30));
  auto b = t.add("grpo-arm", line(1, 0.125, "null", 20) + line(2, 0.25, "null", 20));
  const auto out = t.root + "/page.html";
  ASSERT_TRUE(write_report({a, b}, out).ok());
  auto page = read_file(out);
  ASSERT_TRUE(page.ok());
  for (auto& e : fs::directory_iterator(t.root))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  EXPECT_EQ(page->rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(*page, "<svg"), 13u);
  EXPECT_NE(page->find("Infrastructure per step"), std::string::npos);
  EXPECT_NE(page->find("leap-arm"), std::string::npos);
  EXPECT_NE(page->find("grpo-arm"), std::string::npos);
  // Nothing from outside: no script, no linked resource; the only URL is SVG's namespace name.
  for (auto banned : {"<script", "src=", "href=", "@import", "url(", "<link", "https://"})
    EXPECT_EQ(page->find(banned), std::string::npos) << banned;
  EXPECT_EQ(count(*page, "http://"), count(*page, "http://www.w3.org/2000/svg"));
  // Summary row of leap-arm: 3 steps, 1.5 min, Acc@1 mean of the last 3 = 0.5, best 0.75,
  // turn-1 requests 3 x 12 / later 3 x 4, recovery mean over the two steps that have one 0.75.
  auto row = page->substr(page->find("</span>leap-arm"));
  row = row.substr(0, row.find("</tr>"));
  for (auto cell : {"<td>3</td>", "<td>1.5 min</td>", "<td>0.500</td>", "<td>0.750</td>",
                    "<td>36 / 12</td>", "<td>0.75</td>"})
    EXPECT_NE(row.find(cell), std::string::npos) << cell << " in " << row;
  // A run that fails to load: an error naming it, no page written.
  const auto out2 = t.root + "/page2.html";
  EXPECT_FALSE(write_report({a, t.root + "/nope"}, out2).ok());
  EXPECT_FALSE(fs::exists(out2));
}

// --by-arm: runs grouped by their parent directory, each arm one line per metric (the mean of
// its runs step by step, by hand below) with a band where two runs have the step.
TEST(ReportPage, ByArmMeansOfTheRunsWithBands) {
  temp_runs t;
  auto a1 = t.add("leap/seed1", line(1, 0.25, "null", 30) + line(2, 0.5, "0.5", 30));
  auto a2 = t.add("leap/seed2", line(1, 0.75, "null", 30) + line(2, 0.5, "0.5", 30) + line(3, 1, "1", 30));
  auto b1 = t.add("grpo/seed1", line(1, 0.125, "null", 20));
  EXPECT_EQ(arm_of(a1), "leap");
  EXPECT_EQ(arm_of(a2 + "/"), "leap");
  EXPECT_EQ(arm_of("solo"), "solo");
  const auto out = t.root + "/arms.html";
  ASSERT_TRUE(write_report({a1, b1, a2}, out, true).ok());
  auto page = *read_file(out);
  EXPECT_NE(page.find("leap report, by arm"), std::string::npos);
  EXPECT_NE(page.find("(leap)"), std::string::npos);
  EXPECT_NE(page.find("(grpo)"), std::string::npos);
  // Acc@1 by step: "leap Acc@1" is one line for two runs, grpo's another; no line per run.
  EXPECT_NE(page.find(">leap Acc@1</text>"), std::string::npos);
  EXPECT_NE(page.find(">grpo Acc@1</text>"), std::string::npos);
  EXPECT_EQ(page.find(">seed1 Acc@1</text>"), std::string::npos);
  // Bands: leap's steps 1-2 have two runs (a polygon per metric); grpo has one run, no band.
  EXPECT_GT(count(page, "<polygon"), 0u);
  // The mean at step 1 of leap: Acc@1 (0.25 + 0.75) / 2 = 0.5; t95(1) * 0.3536 / sqrt 2 = 3.18
  // half-width, clipped by nothing: the interval math itself is ExperimentStats' (t95, n - 1).
  auto sr = mean_series("x", 0, {{{1, 0.25}, {2, 0.5}}, {{1, 0.75}, {2, 0.5}, {3, 1.0}}});
  ASSERT_EQ(sr.y.size(), 3u);
  EXPECT_DOUBLE_EQ(sr.y[0], 0.5);
  EXPECT_NEAR(sr.hi[0] - sr.y[0], 12.706 * 0.25, 1e-9); // s = 0.3536, s / sqrt 2 = 0.25
  EXPECT_DOUBLE_EQ(sr.lo[1], 0.5);                       // two equal values: a zero-width band
  EXPECT_DOUBLE_EQ(sr.y[2], 1.0);
  EXPECT_TRUE(std::isnan(sr.hi[2]));                     // one run: no band
  // A point no run has a finite value for is a gap, not a zero.
  auto gap = mean_series("g", 0, {{{1, NAN}}, {{1, NAN}}});
  ASSERT_EQ(gap.y.size(), 1u);
  EXPECT_TRUE(std::isnan(gap.y[0]));
}

// The per-step infrastructure figures ("dropped" and the "infra" object leap train writes) are
// read into the row; rows without them (runs written before) read as zeros; a malformed "infra"
// is an error naming the file, line and field.
TEST(ReportData, InfrastructureFiguresPerStep) {
  temp_runs t;
  std::string with = line(1, 0.5, "null", 10);
  with.insert(with.rfind('}'), ",\"dropped\":3,\"infra\":{\"attempts_lost\":3,\"jobs_retried\":2,"
                               "\"compile_retried\":1,\"execute_retried\":1,\"nodes_lost\":1,"
                               "\"nodes_rejoined\":1,\"jobs_rerun\":4}");
  auto dir = t.add("infra", with + line(2, 0.5, "null", 10));
  auto run = load_run(dir);
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_EQ(run->steps.size(), 2u);
  const auto& s = run->steps[0];
  EXPECT_EQ(s.dropped, 3);
  EXPECT_EQ(s.jobs_retried, 2);
  EXPECT_EQ(s.nodes_lost, 1);
  EXPECT_EQ(s.nodes_rejoined, 1);
  EXPECT_EQ(s.jobs_rerun, 4);
  EXPECT_EQ(run->steps[1].jobs_retried, 0);
  std::string bad = line(1, 0.5, "null", 10);
  bad.insert(bad.rfind('}'), ",\"infra\":5");
  auto broken = load_run(t.add("bad-infra", bad));
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.message().find("infra"), std::string::npos) << broken.message();
  EXPECT_NE(broken.message().find("metrics.jsonl"), std::string::npos) << broken.message();
}
