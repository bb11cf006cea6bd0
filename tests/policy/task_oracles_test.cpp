// Tests of the LibTorch task oracles: hand-computed small cases, error values, and a check that
// every bundled task under tasks/ has a task.toml naming its directory and an oracle.
#include "policy/task_oracles.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace {

using leap::policy::oracle_buffer;
using leap::policy::oracle_case;
using leap::policy::run_oracle;

oracle_buffer floats(std::vector<float> v) {
  oracle_buffer b;
  b.f32 = std::move(v);
  return b;
}

oracle_buffer ints(std::vector<std::int32_t> v) {
  oracle_buffer b;
  b.is_int = true;
  b.i32 = std::move(v);
  return b;
}

oracle_buffer float_out(std::size_t n) { return floats(std::vector<float>(n, NAN)); }

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "index " << i;
}

TEST(TaskOracles, VectorAdd) {
  oracle_case c;
  c.ints["n"] = 3;
  c.inputs["a"] = floats({1, 2, 3});
  c.inputs["b"] = floats({10, -2, 0.5f});
  c.outputs["c"] = float_out(3);
  auto r = run_oracle("vector_add", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["c"].f32, {11, 0, 3.5f}, 0);
}

TEST(TaskOracles, SoftmaxRows) {
  oracle_case c;
  c.ints["rows"] = 2;
  c.ints["cols"] = 2;
  c.inputs["x"] = floats({0, std::log(2.0f), 5, 5});
  c.outputs["y"] = float_out(4);
  auto r = run_oracle("softmax_rows", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["y"].f32, {1.0f / 3, 2.0f / 3, 0.5f, 0.5f}, 1e-6f);
}

TEST(TaskOracles, Matmul2x2) {
  oracle_case c;
  c.ints = {{"M", 2}, {"N", 2}, {"K", 2}};
  c.inputs["A"] = floats({1, 2, 3, 4});
  c.inputs["B"] = floats({5, 6, 7, 8});
  c.outputs["C"] = float_out(4);
  auto r = run_oracle("matmul", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["C"].f32, {19, 22, 43, 50}, 1e-5f);
}

TEST(TaskOracles, MatmulRectangular) {
  // A is 1x3, B is 3x2: C = [1*1 + 2*3 + 3*5, 1*2 + 2*4 + 3*6] = [22, 28].
  oracle_case c;
  c.ints = {{"M", 1}, {"N", 2}, {"K", 3}};
  c.inputs["A"] = floats({1, 2, 3});
  c.inputs["B"] = floats({1, 2, 3, 4, 5, 6});
  c.outputs["C"] = float_out(2);
  auto r = run_oracle("matmul", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["C"].f32, {22, 28}, 1e-5f);
}

TEST(TaskOracles, MatmulBiasRelu) {
  oracle_case c;
  c.ints = {{"M", 2}, {"N", 2}, {"K", 2}};
  c.inputs["A"] = floats({1, 2, 3, 4});
  c.inputs["B"] = floats({5, 6, 7, 8});
  c.inputs["bias"] = floats({-20, -60});
  c.outputs["C"] = float_out(4);
  auto r = run_oracle("matmul_bias_relu", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["C"].f32, {0, 0, 23, 0}, 1e-5f);
}

TEST(TaskOracles, LayernormOfOneTwoThree) {
  // mean 2, biased variance 2/3: y = (x - 2) / sqrt(2/3 + 1e-5) * gamma + beta.
  oracle_case c;
  c.ints = {{"rows", 1}, {"cols", 3}};
  c.inputs["x"] = floats({1, 2, 3});
  c.inputs["gamma"] = floats({1, 1, 2});
  c.inputs["beta"] = floats({0, 0.5f, 0});
  c.outputs["y"] = float_out(3);
  auto r = run_oracle("layernorm_rows", c);
  ASSERT_TRUE(r.ok()) << r.message();
  const float s = static_cast<float>(1.0 / std::sqrt(2.0 / 3.0 + 1e-5));
  expect_near_all(c.outputs["y"].f32, {-s, 0.5f, 2 * s}, 1e-5f);
}

TEST(TaskOracles, RmsnormRow) {
  // mean of squares of [3, 4] is 12.5.
  oracle_case c;
  c.ints = {{"rows", 1}, {"cols", 2}};
  c.inputs["x"] = floats({3, 4});
  c.inputs["weight"] = floats({1, 2});
  c.outputs["y"] = float_out(2);
  auto r = run_oracle("rmsnorm_rows", c);
  ASSERT_TRUE(r.ok()) << r.message();
  const float inv = static_cast<float>(1.0 / std::sqrt(12.5 + 1e-6));
  expect_near_all(c.outputs["y"].f32, {3 * inv, 8 * inv}, 1e-6f);
}

TEST(TaskOracles, SumReduceAndDot) {
  oracle_case c;
  c.ints["n"] = 4;
  c.inputs["x"] = floats({1, 2, 3, -0.5f});
  c.outputs["out"] = float_out(1);
  auto r = run_oracle("sum_reduce", c);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FLOAT_EQ(c.outputs["out"].f32[0], 5.5f);

  oracle_case d;
  d.ints["n"] = 3;
  d.inputs["a"] = floats({1, 2, 3});
  d.inputs["b"] = floats({4, -5, 6});
  d.outputs["out"] = float_out(1);
  auto r2 = run_oracle("dot_product", d);
  ASSERT_TRUE(r2.ok()) << r2.message();
  EXPECT_FLOAT_EQ(d.outputs["out"].f32[0], 12.0f);
}

TEST(TaskOracles, PrefixScanIsInclusive) {
  oracle_case c;
  c.ints["n"] = 5;
  c.inputs["x"] = floats({1, 2, 3, 4, -10});
  c.outputs["y"] = float_out(5);
  auto r = run_oracle("prefix_scan", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["y"].f32, {1, 3, 6, 10, 0}, 0);
}

TEST(TaskOracles, HistogramIgnoresOutOfRange) {
  oracle_case c;
  c.ints = {{"n", 8}, {"bins", 4}};
  c.inputs["x"] = ints({0, 1, 1, 3, -1, 4, 3, 3});
  oracle_buffer out;
  out.is_int = true;
  out.i32.assign(4, -7);
  c.outputs["hist"] = out;
  auto r = run_oracle("histogram", c);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(c.outputs["hist"].i32, (std::vector<std::int32_t>{1, 2, 0, 3}));
}

TEST(TaskOracles, ElementwiseActivations) {
  oracle_case c;
  c.ints["n"] = 3;
  c.inputs["x"] = floats({-2, 0, 3});
  c.outputs["y"] = float_out(3);
  ASSERT_TRUE(run_oracle("relu", c).ok());
  expect_near_all(c.outputs["y"].f32, {0, 0, 3}, 0);
  ASSERT_TRUE(run_oracle("leaky_relu", c).ok());
  expect_near_all(c.outputs["y"].f32, {-0.02f, 0, 3}, 1e-7f);
  ASSERT_TRUE(run_oracle("sigmoid", c).ok());
  expect_near_all(c.outputs["y"].f32,
                  {1.0f / (1.0f + std::exp(2.0f)), 0.5f, 1.0f / (1.0f + std::exp(-3.0f))}, 1e-6f);
  ASSERT_TRUE(run_oracle("gelu", c).ok());
  auto gelu_tanh = [](double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  expect_near_all(c.outputs["y"].f32,
                  {static_cast<float>(gelu_tanh(-2)), 0.0f, static_cast<float>(gelu_tanh(3))},
                  1e-6f);
}

TEST(TaskOracles, TransposeRowMaxMatvec) {
  oracle_case t;
  t.ints = {{"rows", 2}, {"cols", 3}};
  t.inputs["x"] = floats({1, 2, 3, 4, 5, 6});
  t.outputs["y"] = float_out(6);
  ASSERT_TRUE(run_oracle("transpose", t).ok());
  expect_near_all(t.outputs["y"].f32, {1, 4, 2, 5, 3, 6}, 0);

  oracle_case m;
  m.ints = {{"rows", 2}, {"cols", 3}};
  m.inputs["x"] = floats({-5, -1, -3, 2, 9, 4});
  m.outputs["out"] = float_out(2);
  ASSERT_TRUE(run_oracle("row_max", m).ok());
  expect_near_all(m.outputs["out"].f32, {-1, 9}, 0);

  oracle_case v;
  v.ints = {{"M", 2}, {"N", 3}};
  v.inputs["A"] = floats({1, 2, 3, 4, 5, 6});
  v.inputs["x"] = floats({1, 0, -1});
  v.outputs["y"] = float_out(2);
  ASSERT_TRUE(run_oracle("matvec", v).ok());
  expect_near_all(v.outputs["y"].f32, {-2, -2}, 1e-6f);
}

TEST(TaskOracles, Conv1dIsCrossCorrelation) {
  oracle_case c;
  c.ints = {{"n", 5}, {"k", 2}};
  c.inputs["x"] = floats({1, 2, 3, 4, 5});
  c.inputs["w"] = floats({1, 10});
  c.outputs["y"] = float_out(4);
  auto r = run_oracle("conv1d", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["y"].f32, {21, 32, 43, 54}, 1e-5f);
}

TEST(TaskOracles, AttentionWithEqualKeysAveragesValues) {
  // All keys equal: every score in a row is the same, so each output row is the mean of v.
  oracle_case c;
  c.ints = {{"seq", 2}, {"d", 2}};
  c.inputs["q"] = floats({1, 2, 3, 4});
  c.inputs["k"] = floats({1, 1, 1, 1});
  c.inputs["v"] = floats({0, 2, 4, 6});
  c.outputs["out"] = float_out(4);
  auto r = run_oracle("attention_head", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["out"].f32, {2, 4, 2, 4}, 1e-6f);
}

TEST(TaskOracles, ErrorsComeBackAsValues) {
  oracle_case c;
  auto unknown = run_oracle("no_such_task", c);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("no_such_task"), std::string::npos);

  c.ints["n"] = 3;
  c.inputs["a"] = floats({1, 2, 3});
  c.outputs["c"] = float_out(3);
  auto missing = run_oracle("vector_add", c);  // no "b"
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("'b'"), std::string::npos) << missing.message();

  c.inputs["b"] = floats({1, 2});  // wrong size
  auto short_input = run_oracle("vector_add", c);
  ASSERT_FALSE(short_input.ok());
  EXPECT_NE(short_input.message().find("expected 3"), std::string::npos) << short_input.message();

  c.inputs["b"] = floats({1, 2, 3});
  c.outputs["c"] = float_out(4);  // wrong output size
  EXPECT_FALSE(run_oracle("vector_add", c).ok());

  c.outputs["c"] = float_out(3);
  c.ints.erase("n");
  EXPECT_FALSE(run_oracle("vector_add", c).ok());

  c.ints["n"] = 3;
  c.inputs["a"] = ints({1, 2, 3});  // wrong type
  EXPECT_FALSE(run_oracle("vector_add", c).ok());

  c.inputs["a"] = floats({1, 2, 3});
  EXPECT_TRUE(run_oracle("vector_add", c).ok());
}

TEST(TaskOracles, NamesAreSortedAndKnown) {
  auto names = leap::policy::oracle_names();
  EXPECT_GE(names.size(), 18u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const auto& n : names) EXPECT_TRUE(leap::policy::has_oracle(n)) << n;
  EXPECT_FALSE(leap::policy::has_oracle("nope"));
}

TEST(TaskOracles, EveryBundledTaskHasTomlAndOracle) {
  namespace fs = std::filesystem;
  const fs::path tasks_dir = fs::path(LEAP_SOURCE_DIR) / "tasks";
  ASSERT_TRUE(fs::is_directory(tasks_dir)) << tasks_dir;
  std::set<std::string> seen;
  for (const auto& entry : fs::directory_iterator(tasks_dir)) {
    if (!entry.is_directory()) continue;
    const std::string dir_name = entry.path().filename().string();
    const fs::path toml_path = entry.path() / "task.toml";
    ASSERT_TRUE(fs::is_regular_file(toml_path)) << toml_path;
    toml::table tbl;
    try {
      tbl = toml::parse_file(toml_path.string());
    } catch (const toml::parse_error& e) {
      FAIL() << toml_path << ": " << e.description();
    }
    const auto name = tbl["name"].value<std::string>();
    ASSERT_TRUE(name.has_value()) << toml_path << ": no name";
    EXPECT_EQ(*name, dir_name) << toml_path;
    const auto reference = tbl["reference"].value<std::string>();
    ASSERT_TRUE(reference.has_value()) << toml_path;
    EXPECT_TRUE(fs::is_regular_file(entry.path() / *reference)) << toml_path;
    EXPECT_TRUE(leap::policy::has_oracle(dir_name)) << "no oracle for " << dir_name;
    seen.insert(dir_name);
  }
  EXPECT_GE(seen.size(), 18u);
  for (const char* required : {"vector_add", "relu", "softmax_rows", "matmul", "sum_reduce",
                               "layernorm_rows", "matmul_bias_relu"}) {
    EXPECT_EQ(seen.count(required), 1u) << required;
  }
}

} // namespace
