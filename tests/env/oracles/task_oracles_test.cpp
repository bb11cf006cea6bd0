// Tests of the LibTorch task oracles: hand-computed small cases, error values, and a check that
// every bundled task under tasks/ has a task.toml naming its directory and an oracle.
#include "env/oracles/task_oracles.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace {

using leap::oracles::oracle_buffer;
using leap::oracles::oracle_case;
using leap::oracles::run_oracle;

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
  auto names = leap::oracles::oracle_names();
  EXPECT_GE(names.size(), 18u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const auto& n : names) EXPECT_TRUE(leap::oracles::has_oracle(n)) << n;
  EXPECT_FALSE(leap::oracles::has_oracle("nope"));
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
    EXPECT_TRUE(leap::oracles::has_oracle(dir_name)) << "no oracle for " << dir_name;
    seen.insert(dir_name);
  }
  EXPECT_GE(seen.size(), 18u);
  for (const char* required : {"vector_add", "relu", "softmax_rows", "matmul", "sum_reduce",
                               "layernorm_rows", "matmul_bias_relu"}) {
    EXPECT_EQ(seen.count(required), 1u) << required;
  }
}

// ---- held-out eval split: hand-computed cases for the subtle points of its oracles ----

oracle_buffer int_out(std::size_t n) { return ints(std::vector<std::int32_t>(n, -7)); }

TEST(TaskOracles, EvalRowArgminTakesTheFirstOfTiedMinima) {
  oracle_case c;
  c.ints = {{"rows", 2}, {"cols", 4}};
  c.inputs["x"] = floats({3, -1, 2, -1, 5, 6, 5, 7});
  c.outputs["out"] = int_out(2);
  auto r = run_oracle("row_argmin", c);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(c.outputs["out"].i32, (std::vector<std::int32_t>{1, 0}));
}

TEST(TaskOracles, EvalHuberSwitchesToLinearAtDelta) {
  // d = 0.5 -> 0.125; d = -2 -> 1.5; d = 3 -> 2.5; mean 4.125 / 3.
  oracle_case c;
  c.ints["n"] = 3;
  c.inputs["pred"] = floats({1.5f, 0, 3});
  c.inputs["target"] = floats({1, 2, 0});
  c.outputs["out"] = float_out(1);
  auto r = run_oracle("huber_loss", c);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NEAR(c.outputs["out"].f32[0], 4.125 / 3, 1e-6);
}

TEST(TaskOracles, EvalCausalAttentionRowZeroSeesOnlyItself) {
  // Equal keys: row i averages v[0..i].
  oracle_case c;
  c.ints = {{"seq", 3}, {"d", 1}};
  c.inputs["q"] = floats({1, 2, 3});
  c.inputs["k"] = floats({1, 1, 1});
  c.inputs["v"] = floats({3, 6, 9});
  c.outputs["out"] = float_out(3);
  auto r = run_oracle("causal_attention", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["out"].f32, {3, 4.5f, 6}, 1e-5f);
}

TEST(TaskOracles, EvalPoolingWithStride) {
  // maxpool2d: 1 x 3 x 4, k = 2, s = 2 -> 1 x 1 x 2 (the last row is dropped).
  oracle_case c;
  c.ints = {{"C", 1}, {"H", 3}, {"W", 4}, {"k", 2}, {"s", 2}};
  c.inputs["x"] = floats({1, 2, -3, -4, 5, -6, -7, -1, 9, 9, 9, 9});
  c.outputs["y"] = float_out(2);
  auto r = run_oracle("maxpool2d", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["y"].f32, {5, -1}, 0);

  // avgpool1d: 2 x 5, k = 3, s = 2 -> 2 x 2.
  oracle_case d;
  d.ints = {{"C", 2}, {"L", 5}, {"k", 3}, {"s", 2}};
  d.inputs["x"] = floats({1, 2, 3, 4, 5, 0, 0, 3, 6, 0});
  d.outputs["y"] = float_out(4);
  auto r2 = run_oracle("avgpool1d", d);
  ASSERT_TRUE(r2.ok()) << r2.message();
  expect_near_all(d.outputs["y"].f32, {2, 4, 1, 3}, 1e-6f);
}

TEST(TaskOracles, EvalDepthwiseConvDoesNotMixChannels) {
  // 2 x 2 x 2 input, 1 x 1 filters 2 and -1: every channel is only scaled.
  oracle_case c;
  c.ints = {{"C", 2}, {"H", 2}, {"W", 2}, {"R", 1}};
  c.inputs["x"] = floats({1, 2, 3, 4, 5, 6, 7, 8});
  c.inputs["w"] = floats({2, -1});
  c.outputs["y"] = float_out(8);
  auto r = run_oracle("depthwise_conv2d", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["y"].f32, {2, 4, 6, 8, -5, -6, -7, -8}, 0);
}

TEST(TaskOracles, EvalLayoutAndIndexing) {
  // matmul_transposed_a: A is 2 x 1 (K x M), B is 2 x 2: C = A^T B = [1*1 + 2*3, 1*2 + 2*4].
  oracle_case c;
  c.ints = {{"M", 1}, {"N", 2}, {"K", 2}};
  c.inputs["A"] = floats({1, 2});
  c.inputs["B"] = floats({1, 2, 3, 4});
  c.outputs["C"] = float_out(2);
  auto r = run_oracle("matmul_transposed_a", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["C"].f32, {7, 10}, 0);

  // batched_transpose: two 2 x 3 matrices become two 3 x 2 ones.
  oracle_case t;
  t.ints = {{"B", 2}, {"M", 2}, {"N", 3}};
  t.inputs["x"] = floats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  t.outputs["y"] = float_out(12);
  auto r2 = run_oracle("batched_transpose", t);
  ASSERT_TRUE(r2.ok()) << r2.message();
  expect_near_all(t.outputs["y"].f32, {1, 4, 2, 5, 3, 6, 7, 10, 8, 11, 9, 12}, 0);

  // gather repeats indices; an index outside [0, n_src) is an error, not a clamp.
  oracle_case g;
  g.ints = {{"n_src", 3}, {"n_out", 4}};
  g.inputs["x"] = floats({10, 20, 30});
  g.inputs["idx"] = ints({2, 0, 2, 1});
  g.outputs["out"] = float_out(4);
  auto r3 = run_oracle("gather", g);
  ASSERT_TRUE(r3.ok()) << r3.message();
  expect_near_all(g.outputs["out"].f32, {30, 10, 30, 20}, 0);
  g.inputs["idx"] = ints({2, 0, 3, 1});
  EXPECT_FALSE(run_oracle("gather", g).ok());
}

TEST(TaskOracles, EvalRowwiseScansAndNorms) {
  // cumsum_rows restarts at every row; log_softmax of [0, log 3] is [log 1/4, log 3/4].
  oracle_case c;
  c.ints = {{"rows", 2}, {"cols", 3}};
  c.inputs["x"] = floats({1, 2, 3, -1, -1, 5});
  c.outputs["y"] = float_out(6);
  auto r = run_oracle("cumsum_rows", c);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_near_all(c.outputs["y"].f32, {1, 3, 6, -1, -2, 3}, 0);

  oracle_case l;
  l.ints = {{"rows", 1}, {"cols", 2}};
  l.inputs["x"] = floats({0, std::log(3.0f)});
  l.outputs["y"] = float_out(2);
  auto r2 = run_oracle("log_softmax_rows", l);
  ASSERT_TRUE(r2.ok()) << r2.message();
  expect_near_all(l.outputs["y"].f32, {std::log(0.25f), std::log(0.75f)}, 1e-6f);

  // col_mean of a 2 x 2 matrix.
  oracle_case m;
  m.ints = {{"rows", 2}, {"cols", 2}};
  m.inputs["x"] = floats({1, 2, 3, 6});
  m.outputs["out"] = float_out(2);
  auto r3 = run_oracle("col_mean", m);
  ASSERT_TRUE(r3.ok()) << r3.message();
  expect_near_all(m.outputs["out"].f32, {2, 4}, 0);

  // groupnorm, N = 1, C = 2, L = 1, G = 1: the group [1, 3] has mean 2 and variance 1.
  oracle_case g;
  g.ints = {{"N", 1}, {"C", 2}, {"L", 1}, {"G", 1}};
  g.inputs["x"] = floats({1, 3});
  g.inputs["gamma"] = floats({1, 2});
  g.inputs["beta"] = floats({0, 1});
  g.outputs["y"] = float_out(2);
  auto r4 = run_oracle("groupnorm", g);
  ASSERT_TRUE(r4.ok()) << r4.message();
  const float s = static_cast<float>(1.0 / std::sqrt(1.0 + 1e-5));
  expect_near_all(g.outputs["y"].f32, {-s, 2 * s + 1}, 1e-6f);
  g.ints["G"] = 3;  // does not divide C
  EXPECT_FALSE(run_oracle("groupnorm", g).ok());
}

TEST(TaskOracles, EvalActivationsAndFused) {
  oracle_case c;
  c.ints["n"] = 3;
  c.inputs["x"] = floats({2, 0, -1});
  c.outputs["y"] = float_out(3);
  ASSERT_TRUE(run_oracle("elu", c).ok());
  expect_near_all(c.outputs["y"].f32, {2, 0, static_cast<float>(std::exp(-1.0) - 1)}, 1e-6f);
  ASSERT_TRUE(run_oracle("mish", c).ok());
  const auto mish = [](double x) { return x * std::tanh(std::log1p(std::exp(x))); };
  expect_near_all(c.outputs["y"].f32,
                  {static_cast<float>(mish(2)), 0, static_cast<float>(mish(-1))}, 1e-6f);

  oracle_case l;
  l.ints["n"] = 2;
  l.inputs["a"] = floats({1, -2});
  l.inputs["b"] = floats({3, 2});
  l.inputs["w"] = floats({0.25f, 1});
  l.outputs["out"] = float_out(2);
  ASSERT_TRUE(run_oracle("lerp", l).ok());
  expect_near_all(l.outputs["out"].f32, {1.5f, 2}, 0);

  // matmul_bias_gelu with 1 x 1 operands: z = 2 * 0.5 + 0 = 1.
  oracle_case f;
  f.ints = {{"M", 1}, {"N", 1}, {"K", 1}};
  f.inputs["A"] = floats({2});
  f.inputs["B"] = floats({0.5f});
  f.inputs["bias"] = floats({0});
  f.outputs["C"] = float_out(1);
  ASSERT_TRUE(run_oracle("matmul_bias_gelu", f).ok());
  const double gelu1 = 0.5 * (1 + std::tanh(std::sqrt(2 / std::acos(-1.0)) * (1 + 0.044715)));
  EXPECT_NEAR(f.outputs["C"].f32[0], gelu1, 1e-6);
}

// ---- end of held-out eval split ----

} // namespace
