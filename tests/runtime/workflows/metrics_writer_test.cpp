// The metrics of a training run (runtime/workflows/metrics_writer.hpp) without a training run:
// one metrics.jsonl row per step with every field `leap report` reads, the infrastructure's cost
// (the nodes' cumulative counters turned into per-step figures), a clustered run's nodes and
// weights; one groups.jsonl line per group; and a file that cannot be written named in the error.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/train_messages.hpp"
#include "runtime/workflows/metrics_writer.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

using namespace leap;
using namespace leap::runtime;
using leap::test::temp_dir;

namespace {

std::vector<nlohmann::json> rows_of(const std::string& path) {
  std::vector<nlohmann::json> rows;
  auto text = read_file(path);
  if (text)
    for (auto& line : split_lines(*text))
      if (!trim(line).empty())
        rows.push_back(nlohmann::json::parse(line));
  return rows;
}

msg::step_report report(std::int64_t step, std::size_t groups) {
  msg::step_report r;
  r.step = step;
  r.policy_version = step;
  r.loss = 0.25;
  r.acc_at_1 = 0.5;
  r.attempts = 8;
  r.compiles = 6;
  r.cache_hits = 2;
  r.dropped = 1;
  r.tasks = {"relu"};
  for (std::size_t g = 0; g < groups; ++g) {
    msg::group_summary s;
    s.group_id = step * 10 + g;
    s.task = "relu";
    s.attempts.resize(2);
    r.group_details.push_back(s);
  }
  return r;
}

} // namespace

TEST(MetricsWriter, OneRowPerStepWithTheInfrastructuresCostPerStep) {
  temp_dir t;
  auto w = metrics_writer::open(t.path + "/metrics.jsonl", t.path + "/groups.jsonl");
  ASSERT_TRUE(w) << w.message();
  ASSERT_TRUE(w->write_step(report(1, 2), 2.0, 4.0, {3, 1}, nullptr));
  msg::cluster_status nodes;
  nodes.nodes.resize(1);
  nodes.nodes[0].name = "n1";
  nodes.nodes[0].lost = 2;
  nodes.nodes[0].rerun = 5;
  nodes.weights_version = 2;
  ASSERT_TRUE(w->write_step(report(2, 1), 1.0, 8.0, {}, &nodes));
  nodes.nodes[0].lost = 3;
  nodes.nodes[0].rejoined = 1;
  ASSERT_TRUE(w->write_step(report(3, 1), 1.0, 8.0, {}, &nodes));
  auto rows = rows_of(t.path + "/metrics.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  for (auto* key : {"step", "acc_at_1", "loss", "compiles", "cache_hits", "dropped", "attempts",
                    "attempts_per_second", "step_seconds", "outcome", "policy_version", "tasks",
                    "infra"})
    EXPECT_TRUE(rows[0].contains(key)) << key;
  EXPECT_EQ(rows[0]["step"], 1);
  EXPECT_DOUBLE_EQ(rows[0]["step_seconds"].get<double>(), 2.0);
  EXPECT_EQ(rows[0]["infra"]["attempts_lost"], 1);
  EXPECT_EQ(rows[0]["infra"]["jobs_retried"], 4);
  EXPECT_EQ(rows[0]["infra"]["compile_retried"], 3);
  EXPECT_FALSE(rows[0].contains("nodes")); // not clustered
  // The nodes' counters are cumulative; the rows hold what each step added.
  EXPECT_EQ(rows[1]["infra"]["nodes_lost"], 2);
  EXPECT_EQ(rows[1]["infra"]["jobs_rerun"], 5);
  EXPECT_EQ(rows[2]["infra"]["nodes_lost"], 1);
  EXPECT_EQ(rows[2]["infra"]["nodes_rejoined"], 1);
  EXPECT_EQ(rows[2]["infra"]["jobs_rerun"], 0);
  ASSERT_EQ(rows[1]["nodes"].size(), 1u);
  EXPECT_EQ(rows[1]["nodes"][0]["node"], "n1");
  EXPECT_EQ(rows[1]["weights_to_nodes"]["version"], 2);
  auto groups = rows_of(t.path + "/groups.jsonl");
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0]["step"], 1);
  EXPECT_EQ(groups[3]["step"], 3);
  EXPECT_EQ(groups[3]["attempts"].size(), 2u);
  // The live display's line names the node.
  EXPECT_NE(nodes_line(nodes).find("n1"), std::string::npos);
}

TEST(MetricsWriter, AFileThatCannotBeWrittenIsNamed) {
  temp_dir t;
  // /dev/full opens, and every write to it fails (ENOSPC): a full disk.
  auto w = metrics_writer::open("/dev/full", t.path + "/groups.jsonl");
  ASSERT_TRUE(w) << w.message();
  auto r = w->write_step(report(1, 1), 1.0, 1.0, {}, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("cannot write /dev/full: "), std::string::npos) << r.message();
  // The groups were written all the same.
  EXPECT_EQ(rows_of(t.path + "/groups.jsonl").size(), 1u);
  auto bad = metrics_writer::open(t.path + "/no/such/dir/metrics.jsonl", t.path + "/g.jsonl");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("cannot write " + t.path + "/no/such/dir/metrics.jsonl"),
            std::string::npos)
    << bad.message();
}
