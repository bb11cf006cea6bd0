// The files a run keeps outside its checkpoint, after a crash: metrics.jsonl with its last line
// cut (dropped with a warning naming the file; later steps dropped for the resume), and the
// corpus label cache (a damaged entry is removed with a reason naming it; an intact one, also
// one written before entries had a checksum, is read as it is).
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "runtime/workflows/label_cache.hpp"
#include "runtime/workflows/run_dir.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

namespace {

using leap::test::temp_dir;

} // namespace

TEST(RunFiles, MetricsWithACutLastLineAreRepairedWithAWarning) {
  temp_dir t;
  const auto path = t.path + "/metrics.jsonl";
  std::ofstream(path) << "{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\": 0.4}\n"
                         "{\"step\": 3, \"loss\": 0.3}\n{\"step\": 4, \"lo";
  auto r = truncate_jsonl(path, 3);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->kept, 3u);
  EXPECT_EQ(r->damaged, 1u);
  ASSERT_TRUE(r->warning);
  EXPECT_NE(r->warning->find(path + ": dropped 1 damaged line(s) (first: line 4"), std::string::npos)
    << *r->warning;
  EXPECT_EQ(split_lines(std::string(trim(*read_file(path)))).size(), 3u);
  std::printf("[ run files ] %s\n", r->warning->c_str());
  // A clean file: steps after the checkpoint go, no warning.
  r = truncate_jsonl(path, 2);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kept, 2u);
  EXPECT_EQ(r->after_step, 1u);
  EXPECT_FALSE(r->warning);
  // A missing file is nothing to repair.
  EXPECT_TRUE(truncate_jsonl(t.path + "/none.jsonl", 2));
}

TEST(RunFiles, DamagedLabelCacheEntriesAreRemovedWithAReason) {
  temp_dir t;
  cached_label l{env::status::wrong_answer, "mismatch", "wrong result: max abs error 3 at index 17", false};
  const auto path = t.path + "/abc.json";
  ASSERT_TRUE(write_cached_label(path, l, "vector_add", "bug-3"));
  cached_label back;
  std::string problem;
  ASSERT_EQ(read_cached_label(path, back, problem), label_read::hit) << problem;
  EXPECT_EQ(back.st, env::status::wrong_answer);
  EXPECT_EQ(back.feedback, l.feedback);
  const auto good = *read_file(path);
  // A flipped digit keeps it valid JSON: only the checksum catches it.
  auto flipped = good;
  flipped[flipped.find("17")] = '7';
  std::ofstream(path, std::ios::trunc) << flipped;
  EXPECT_EQ(read_cached_label(path, back, problem), label_read::repaired);
  EXPECT_NE(problem.find(path + ": checksum mismatch"), std::string::npos) << problem;
  EXPECT_FALSE(fs::exists(path));
  std::printf("[ run files ] %s\n", problem.c_str());
  // Cut by a crash.
  std::ofstream(path, std::ios::trunc) << good.substr(0, good.size() / 2);
  EXPECT_EQ(read_cached_label(path, back, problem), label_read::repaired);
  EXPECT_NE(problem.find("not a JSON object"), std::string::npos) << problem;
  // Written before entries had a checksum: read as it is.
  std::ofstream(path, std::ios::trunc) << R"({"status": "correct", "reason": "", "feedback": "ok"})";
  EXPECT_EQ(read_cached_label(path, back, problem), label_read::hit);
  EXPECT_EQ(back.st, env::status::correct);
  EXPECT_EQ(read_cached_label(t.path + "/missing.json", back, problem), label_read::miss);
}
