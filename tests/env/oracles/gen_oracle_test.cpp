// The LibTorch oracle of the generated families (env/oracles/gen_oracle) against the generator's own
// sequential evaluation of the same operator, on small random inputs: two independent
// computations of every family must agree. Plus hand-checked cases.
#include "env/taskgen/generator.hpp"
#include "env/oracles/gen_oracle.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace leap;
using namespace leap::taskgen;

namespace {

// Runs the oracle on `inputs` (float32 values) at `sizes` and returns output `out_name`.
std::vector<double> oracle(const env::task_spec& spec, const gen_op& op, const env::size_set& sizes,
                           const std::map<std::string, std::vector<double>>& inputs) {
  oracles::oracle_case c;
  for (auto& [k, v] : sizes)
    c.ints[k] = v;
  std::string out_name;
  bool out_int = false;
  for (std::size_t i = 0; i < spec.args.size(); ++i) {
    auto& a = spec.args[i];
    if (!a.p.is_pointer)
      continue;
    oracles::oracle_buffer b;
    b.is_int = a.p.kind == env::scalar_kind::i32;
    auto n = static_cast<std::size_t>(spec.elements(i, sizes));
    if (a.role == env::arg_role::input) {
      auto& v = inputs.at(a.p.name);
      if (b.is_int)
        b.i32.assign(v.begin(), v.end());
      else
        b.f32.assign(v.begin(), v.end());
      c.inputs[a.p.name] = b;
    } else {
      out_name = a.p.name;
      out_int = b.is_int;
      if (b.is_int) b.i32.resize(n); else b.f32.resize(n);
      c.outputs[a.p.name] = b;
    }
  }
  auto r = oracles::run_generated_oracle(op, c);
  EXPECT_TRUE(r.ok()) << spec.name << ": " << r.message();
  auto& o = c.outputs.at(out_name);
  return out_int ? std::vector<double>(o.i32.begin(), o.i32.end()) : std::vector<double>(o.f32.begin(), o.f32.end());
}

// Draws `t`'s inputs (by the names the task shows) at `sz`, runs the oracle on them and the
// generator's evaluation on the same values by the operator's own names, and expects them to agree
// within atol + rtol * |value| (after rounding the evaluation to float32).
void expect_agrees_under_shown_names(const gen_task& t, const env::size_set& sz, double atol, double rtol,
                                     std::mt19937& gen) {
  std::map<std::string, std::vector<double>> shown, own;
  for (std::size_t i = 0; i < t.spec.args.size(); ++i) {
    auto& a = t.spec.args[i];
    if (a.role != env::arg_role::input)
      continue;
    std::uniform_real_distribution<float> u(static_cast<float>(a.init.a), static_cast<float>(a.init.b));
    auto& v = shown[a.p.name];
    for (long long j = 0; j < t.spec.elements(i, sz); ++j)
      v.push_back(u(gen));
    std::string key = a.p.name;
    for (auto& [o, s] : t.op.names)
      if (s == a.p.name)
        key = o;
    own[key] = v;
  }
  auto want = evaluate(t.op, sz, own);
  auto got = oracle(t.spec, t.op, sz, shown);
  ASSERT_EQ(got.size(), want.size()) << t.name;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double w = static_cast<float>(want[i]);
    ASSERT_LE(std::fabs(got[i] - w), atol + rtol * std::fabs(w)) << t.name << " at " << i;
  }
}

} // namespace

TEST(GenOracle, AgreesWithTheGeneratorsEvaluationOnEveryFamily) {
  gen_options o;
  o.seed = 3;
  o.train = 70;
  o.eval_instances = 7;
  o.eval_compositions = 7;
  auto suite = generate_suite(o);
  ASSERT_TRUE(suite.ok()) << suite.message();
  std::mt19937 gen(5);
  int checked = 0;
  std::map<std::string, int> per_family;
  for (auto& t : *suite) {
    // small sizes of the same shape family: the task's odd size set, scaled down
    env::size_set sz = t.spec.sizes[1];
    for (auto& [k, v] : sz)
      if (k != "L" && v > 200)
        v = v % 97 + 101;
    if (sz.count("L"))
      sz["L"] = 301;
    std::map<std::string, std::vector<double>> in;
    for (std::size_t i = 0; i < t.spec.args.size(); ++i) {
      auto& a = t.spec.args[i];
      if (a.role != env::arg_role::input)
        continue;
      std::uniform_real_distribution<float> u(static_cast<float>(a.init.a), static_cast<float>(a.init.b));
      std::uniform_int_distribution<int> ui(static_cast<int>(a.init.a), static_cast<int>(a.init.b)); // gather indices
      auto& v = in[a.p.name];
      for (long long j = 0; j < t.spec.elements(i, sz); ++j)
        v.push_back(a.p.kind == env::scalar_kind::i32 ? ui(gen) : u(gen));
    }
    auto want = evaluate(t.op, sz, in);
    auto got = oracle(t.spec, t.op, sz, in);
    ASSERT_EQ(got.size(), want.size()) << t.name;
    for (std::size_t i = 0; i < want.size(); ++i) {
      double w = static_cast<float>(want[i]);
      ASSERT_LE(std::fabs(got[i] - w), 1e-6 + 1e-5 * std::fabs(w))
          << t.name << " (" << canonical_form(t.op) << ") at " << i << ": oracle " << got[i] << ", generator " << w;
    }
    ++checked;
    ++per_family[tag(t.op.fam)];
  }
  EXPECT_EQ(checked, 84);
  for (auto f : all_families())
    EXPECT_GE(per_family[tag(f)], 7) << tag(f);
}

TEST(GenOracle, HandCheckedCases) {
  // ew: out = max(a, b) * 2 on two values
  gen_op ew;
  ew.fam = family::ew;
  ew.inputs = 2;
  ew.body = *parse_expr("mul(max(a,b),2)");
  oracles::oracle_case c;
  c.ints["n"] = 2;
  c.inputs["a"].f32 = {1.0f, -3.0f};
  c.inputs["b"].f32 = {0.5f, -1.0f};
  c.outputs["out"].f32.resize(2);
  ASSERT_TRUE(oracles::run_generated_oracle(ew, c).ok());
  EXPECT_EQ(c.outputs["out"].f32, (std::vector<float>{2.0f, -2.0f}));
  // red: column argmin of |x| over a 2 x 3 matrix [[1, -2, 3], [-0.5, 4, -1]] -> 1, 0, 1
  gen_op red;
  red.fam = family::red;
  red.axis = "col";
  red.reduce = "argmin";
  red.map = *parse_expr("abs(v)");
  oracles::oracle_case r;
  r.ints = {{"rows", 2}, {"cols", 3}};
  r.inputs["x"].f32 = {1, -2, 3, -0.5f, 4, -1};
  r.outputs["out"].is_int = true;
  r.outputs["out"].i32.resize(3);
  ASSERT_TRUE(oracles::run_generated_oracle(red, r).ok());
  EXPECT_EQ(r.outputs["out"].i32, (std::vector<std::int32_t>{1, 0, 1}));
  // scan: exclusive reverse running sum of a row [1, 2, 3] -> [5, 3, 0]
  gen_op sc;
  sc.fam = family::scan;
  sc.reduce = "sum";
  sc.exclusive = true;
  sc.reverse = true;
  oracles::oracle_case s;
  s.ints = {{"rows", 1}, {"cols", 3}};
  s.inputs["x"].f32 = {1, 2, 3};
  s.outputs["y"].f32.resize(3);
  ASSERT_TRUE(oracles::run_generated_oracle(sc, s).ok());
  EXPECT_EQ(s.outputs["y"].f32, (std::vector<float>{5, 3, 0}));
  // layout: gather rows 1, 1, 0 of a 2 x 2 matrix [[1, 2], [3, 4]]
  gen_op gr;
  gr.fam = family::layout;
  gr.variant = "gather_rows";
  oracles::oracle_case g;
  g.ints = {{"rows", 2}, {"cols", 2}, {"n", 3}};
  g.inputs["x"].f32 = {1, 2, 3, 4};
  g.inputs["idx"].is_int = true;
  g.inputs["idx"].i32 = {1, 1, 0};
  g.outputs["out"].f32.resize(6);
  ASSERT_TRUE(oracles::run_generated_oracle(gr, g).ok());
  EXPECT_EQ(g.outputs["out"].f32, (std::vector<float>{3, 4, 3, 4, 1, 2}));
  // an index outside [0, rows) is an error value
  g.inputs["idx"].i32 = {1, 2, 0};
  EXPECT_FALSE(oracles::run_generated_oracle(gr, g).ok());
  // stencil: 4-neighbour Laplacian of a 3 x 3 image 0..8 with reflect padding (row -1 reads
  // row 1): corners 8 and -8 (as the generator's evaluation, taskgen_test)
  gen_op lp;
  lp.fam = family::stencil;
  lp.variant = "laplace4";
  lp.border = "mirror";
  oracles::oracle_case st;
  st.ints = {{"C", 1}, {"H", 3}, {"W", 3}};
  st.inputs["x"].f32 = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  st.outputs["y"].f32.resize(9);
  ASSERT_TRUE(oracles::run_generated_oracle(lp, st).ok());
  EXPECT_EQ(st.outputs["y"].f32[0], 8.0f);
  EXPECT_EQ(st.outputs["y"].f32[8], -8.0f);
  // a missing buffer is an error value, not an exception
  oracles::oracle_case bad;
  bad.ints["n"] = 2;
  EXPECT_FALSE(oracles::run_generated_oracle(ew, bad).ok());
}

// Paraphrased elementwise tasks (and their written forms) show their buffers under other names
// (op.names): the oracle, given the buffers by those names, computes the same as the generator's
// evaluation by the operator's own names, and hands the buffers back under the shown names.
TEST(GenOracle, ParaphrasesWithTheirOwnBufferNames) {
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i)
    names.push_back(paraphrase_name(family::ew, i));
  for (int i = 0; i < 20; ++i)
    names.push_back(written_name(family::ew, i));
  auto tasks = generate_tasks(1, names);
  ASSERT_TRUE(tasks.ok()) << tasks.message();
  std::mt19937 gen(9);
  int renamed = 0;
  for (auto& t : *tasks) {
    expect_agrees_under_shown_names(t, {{"n", 333}}, 1e-6, 1e-5, gen);
    renamed += !t.op.names.empty();
  }
  EXPECT_GT(renamed, 25);
  // A case whose buffers do not carry the shown names is an error naming the missing one.
  auto& t = tasks->front();
  oracles::oracle_case c;
  c.ints["n"] = 4;
  auto r = oracles::run_generated_oracle(t.op, c);
  EXPECT_FALSE(r.ok());
}

// Notation forms of every family that has one show their buffers under names of their own and
// pooling windows sometimes as the ints k and s: the oracle, given the buffers by the shown names
// at a test size of the task, computes what the generator's evaluation computes by the own names.
TEST(GenOracle, NotationFormsWithTheirOwnBufferNames) {
  std::vector<std::string> names;
  for (auto f : {family::red, family::scan, family::softmax, family::pool, family::matmul, family::ew})
    for (int i = 0; i < 6; ++i)
      names.push_back(notation_name(f, i));
  auto tasks = generate_tasks(1, names);
  ASSERT_TRUE(tasks.ok()) << tasks.message();
  std::mt19937 gen(11);
  int renamed = 0;
  for (auto& t : *tasks) {
    expect_agrees_under_shown_names(t, t.spec.sizes.back(), t.spec.atol, t.spec.rtol, gen);
    renamed += !t.op.names.empty();
  }
  EXPECT_GT(renamed, 15);
}
