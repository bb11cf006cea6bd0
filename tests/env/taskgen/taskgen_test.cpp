// The generated task families (env/taskgen): the IR's canonical forms, determinism by seed,
// 2,000 distinct training operators, the tolerance refusal, and splits that are disjoint by
// canonical form (no eval-split operator, held-out compositions never trained).
#include "common/strings.hpp"
#include "env/taskgen/generator.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

using namespace leap;
using namespace leap::taskgen;

namespace {

gen_op ew(int inputs, const std::string& body) {
  gen_op op;
  op.fam = family::ew;
  op.inputs = inputs;
  auto e = parse_expr(body);
  EXPECT_TRUE(e.ok()) << body << ": " << e.message();
  op.body = *e;
  return op;
}

// The big suite is generated once for the tests that need it (about 2 s).
const std::vector<gen_task>& big_suite() {
  static const std::vector<gen_task> suite = [] {
    gen_options o;
    o.seed = 1;
    o.train = 2000;
    o.eval_instances = 35;
    o.eval_compositions = 70;
    auto s = generate_suite(o);
    EXPECT_TRUE(s.ok()) << s.message();
    return s ? *s : std::vector<gen_task>{};
  }();
  return suite;
}

} // namespace

TEST(TaskgenIr, CanonicalFormsIgnoreOperandOrderAndTrivialSteps) {
  EXPECT_EQ(canonical_form(ew(2, "add(a,b)")), canonical_form(ew(2, "add(b,a)")));
  EXPECT_EQ(canonical_form(ew(2, "max(tanh(b),a)")), canonical_form(ew(2, "max(a,tanh(b))")));
  EXPECT_NE(canonical_form(ew(2, "sub(a,b)")), canonical_form(ew(2, "sub(b,a)")));
  EXPECT_EQ(to_text(canonical(*parse_expr("abs(square(a))"))), "square(a)");
  EXPECT_EQ(to_text(canonical(*parse_expr("mul(a,1)"))), "a");
  EXPECT_EQ(to_text(canonical(*parse_expr("add(mul(2,3),a)"))), "add(6,a)");
  EXPECT_EQ(to_text(canonical(*parse_expr("select(a,0,b,b)"))), "b");
  // The composition abstracts the constants, the canonical form keeps them.
  EXPECT_EQ(composition(ew(1, "mul(a,2)")), composition(ew(1, "mul(a,3)")));
  EXPECT_NE(canonical_form(ew(1, "mul(a,2)")), canonical_form(ew(1, "mul(a,3)")));
  EXPECT_EQ(composition(ew(1, "mul(a,2)")), "ew;inputs=1;body=mul(#,a)");
  EXPECT_FALSE(parse_expr("frob(a)").ok());
  EXPECT_FALSE(parse_expr("add(a)").ok());
}

TEST(TaskgenIr, SerialisationRoundTrips) {
  gen_op op;
  op.fam = family::scan;
  op.axis = "col";
  op.reduce = "sum";
  op.exclusive = true;
  op.reverse = true;
  op.map = *parse_expr("add(v,-0.5)");
  auto back = parse_op(serialize(op));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(canonical_form(*back), canonical_form(op));
  EXPECT_FALSE(parse_op("fam=nope").ok());
}

TEST(TaskgenSuite, DeterministicBySeedAndPrefixStable) {
  gen_options o;
  o.seed = 7;
  o.train = 40;
  o.eval_instances = 7;
  o.eval_compositions = 7;
  auto a = generate_suite(o), b = generate_suite(o);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->size(), 54u);
  ASSERT_EQ(a->size(), b->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].name, (*b)[i].name);
    EXPECT_EQ((*a)[i].toml, (*b)[i].toml);
    EXPECT_EQ((*a)[i].reference, (*b)[i].reference);
  }
  // Asking for fewer tasks gives a prefix: the same name is the same task.
  o.train = 20;
  auto small = generate_suite(o);
  ASSERT_TRUE(small.ok());
  std::map<std::string, std::string> by_name;
  for (auto& t : *a)
    by_name[t.name] = t.toml;
  for (auto& t : *small) {
    ASSERT_TRUE(by_name.count(t.name)) << t.name;
    EXPECT_EQ(by_name[t.name], t.toml) << t.name;
  }
  // One task by name equals the suite's.
  for (std::size_t i = 0; i < a->size(); i += 9) {
    auto one = generate_task(7, (*a)[i].name);
    ASSERT_TRUE(one.ok()) << one.message();
    EXPECT_EQ(one->toml, (*a)[i].toml);
    EXPECT_EQ(one->reference, (*a)[i].reference);
  }
  // Another seed gives other tasks under the same names.
  o.seed = 8;
  o.train = 40;
  auto other = generate_suite(o);
  ASSERT_TRUE(other.ok());
  int same = 0;
  for (auto& t : *other)
    same += by_name.count(t.name) && by_name[t.name] == t.toml;
  EXPECT_LT(same, 5);
  EXPECT_FALSE(generate_task(7, "gen_ew_x00001").ok());
  EXPECT_FALSE(generate_task(7, "gen_nofamily_t00001").ok());
  EXPECT_FALSE(generate_task(7, "gen_softmax_t09999").ok()); // the family has fewer operators
}

TEST(TaskgenSuite, TwoThousandDistinctTrainingOperatorsInTheSuiteFormat) {
  const auto& suite = big_suite();
  std::set<std::string> canon, names;
  int train = 0;
  for (auto& t : suite) {
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    if (t.kind != gen_kind::train)
      continue;
    ++train;
    canon.insert(canonical_form(t.op));
    EXPECT_EQ(t.spec.split, env::task_split::train);
  }
  EXPECT_EQ(train, 2000);
  EXPECT_EQ(canon.size(), 2000u);
  std::map<family, int> per_family;
  for (auto& t : suite)
    ++per_family[t.op.fam];
  for (auto f : all_families())
    EXPECT_GE(per_family[f], 30) << tag(f);
}

// A list of names is generated with one draw per family, and gives exactly what each name gives
// alone (the lists are prefix-stable per kind), in the order asked; a bad name is an error.
TEST(TaskgenSuite, ManyNamesAtOnceEqualEachNameAlone) {
  const std::vector<std::string> names = {"gen_ew_t00120", "gen_red_t00003", "gen_ew_i00002",
                                          "gen_ew_t00007", "gen_stencil_c00001", "gen_ew_t00120"};
  auto all = generate_tasks(1, names);
  ASSERT_TRUE(all.ok()) << all.message();
  ASSERT_EQ(all->size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto one = generate_task(1, names[i]);
    ASSERT_TRUE(one.ok()) << one.message();
    EXPECT_EQ((*all)[i].name, names[i]);
    EXPECT_EQ((*all)[i].toml, one->toml) << names[i];
    EXPECT_EQ((*all)[i].reference, one->reference) << names[i];
  }
  EXPECT_FALSE(generate_tasks(1, {"gen_ew_t00001", "gen_ew_x1"}).ok());
  auto missing = generate_tasks(1, {"gen_red_t99999"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("does not exist"), std::string::npos) << missing.message();
}

TEST(TaskgenSuite, EveryTaskIsWellFormed) {
  for (auto& t : big_suite()) {
    const auto& s = t.spec;
    EXPECT_EQ(s.name, t.name);
    EXPECT_EQ(s.split, t.kind == gen_kind::train ? env::task_split::train : env::task_split::eval) << t.name;
    // The description says what to compute, not the template's name, and ends like the suite's.
    std::string out_name;
    for (auto& a : s.args)
      if (a.role == env::arg_role::output)
        out_name = a.p.name;
    EXPECT_NE(s.description.find(out_name + "["), std::string::npos) << t.name << " never names " << out_name;
    EXPECT_EQ(s.description.find(tag(t.op.fam) + std::string("_")), std::string::npos) << t.name;
    EXPECT_NE(s.description.find("All pointers are device pointers"), std::string::npos) << t.name;
    // Some size set has only odd sizes: no multiple of any common block size.
    bool odd_set = false;
    for (auto& ss : s.sizes) {
      bool all_odd = true;
      for (auto& [k, v] : ss)
        all_odd = all_odd && v % 2 == 1;
      odd_set = odd_set || all_odd;
    }
    EXPECT_TRUE(odd_set) << t.name;
    auto op = op_of_reference(s.reference_source);
    ASSERT_TRUE(op.ok()) << t.name << ": " << op.message();
    EXPECT_EQ(canonical_form(*op), canonical_form(t.op)) << t.name;
    // Its own tolerance passes the refusal.
    EXPECT_TRUE(check_tolerance(t.op, s.atol, s.rtol, 1).ok()) << t.name;
  }
  EXPECT_FALSE(op_of_reference("#include <cuda_runtime.h>\n").ok());
}

// The elementwise reference writes the description's formula as the description writes it (same
// operators, parentheses, argument order and names; numbers as float literals, exp/tanh/sin/cos
// as their float forms), so a reader, or a model, can copy it: undoing exactly those spellings
// turns the kernel's `out[i] = ...;` into the prose's `out[i] = ... .` for every task whose prose
// has no |t|, (t)^2 or log(1 + |t|), which have their own C forms.
TEST(TaskgenSuite, ElementwiseReferencesTranscribeTheDescriptionsFormula) {
  auto line_after = [](const std::string& text, const std::string& from, char end) {
    auto p = text.find(from);
    if (p == std::string::npos)
      return std::string();
    auto e = text.find('\n', p);
    std::string l = text.substr(p, e == std::string::npos ? e : e - p);
    while (!l.empty() && l.back() == end)
      l.pop_back();
    return l;
  };
  const std::regex float_literal(R"((\d)(\.0)?f\b)");
  const std::regex float_fn(R"(\b(exp|tanh|sin|cos)f\()");
  int checked = 0, ew_tasks = 0;
  for (auto& t : big_suite()) {
    if (t.op.fam != family::ew)
      continue;
    ++ew_tasks;
    const auto& s = t.spec;
    std::string prose = line_after(s.description, "out[i] = ", '.');
    std::string code = line_after(s.reference_source, "  out[i] = ", ';');
    ASSERT_FALSE(prose.empty()) << t.name;
    ASSERT_FALSE(code.empty()) << t.name << ":\n" << s.reference_source;
    EXPECT_EQ(code.find("double"), std::string::npos) << t.name;
    if (prose.find_first_of("|^") != std::string::npos)
      continue;
    code = std::regex_replace(std::regex_replace(code.substr(2), float_literal, "$1"), float_fn, "$1(");
    EXPECT_EQ(code, prose) << t.name;
    ++checked;
  }
  EXPECT_GT(ew_tasks, 500);
  EXPECT_GT(checked, ew_tasks / 2) << "most elementwise formulas have no |t| or (t)^2";
}

TEST(TaskgenTolerance, RefusesWhatDegenerateAnswersPass) {
  // relu(a - 5) with a in [-3, 3] at most: always 0, so the all-zero output passes.
  auto zero = check_tolerance(ew(1, "relu(sub(a,5))"), 1e-5, 1e-4);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.message().find("all-zero"), std::string::npos) << zero.message();
  // a + 1e-7: a copy of the input passes at atol 1e-5.
  auto copy = check_tolerance(ew(1, "add(a,0.0000001)"), 1e-5, 1e-4);
  ASSERT_FALSE(copy.ok());
  EXPECT_NE(copy.message().find("copy of input 'a'"), std::string::npos) << copy.message();
  // 3 + tiny: a constant output passes.
  auto cst = check_tolerance(ew(1, "add(mul(sin(a),0.000000001),3)"), 1e-5, 1e-4);
  ASSERT_FALSE(cst.ok());
  EXPECT_NE(cst.message().find("constant"), std::string::npos) << cst.message();
  // Every operation must matter on the test inputs (every input range the family draws lies in
  // [-3, 3]): with a > -5 always true, writing the then-branch passes; a clamp to [-5, 5] is never
  // reached, so dropping it passes. A threshold inside every range is fine.
  auto branch = check_tolerance(ew(2, "select(a,-5,mul(b,2),cos(b))"), 1e-5, 1e-4);
  ASSERT_FALSE(branch.ok());
  EXPECT_NE(branch.message().find("without select"), std::string::npos) << branch.message();
  auto clamp = check_tolerance(ew(1, "mul(clamp(a,-5,5),2)"), 1e-5, 1e-4);
  ASSERT_FALSE(clamp.ok());
  EXPECT_NE(clamp.message().find("without clamp (clamp(a,-5,5) replaced by a)"), std::string::npos)
    << clamp.message();
  EXPECT_TRUE(check_tolerance(ew(2, "select(a,0.5,mul(b,2),cos(b))"), 1e-5, 1e-4).ok());
  // tanh(a) is fine at a sensible tolerance, refused at a tolerance of 10.
  EXPECT_TRUE(check_tolerance(ew(1, "tanh(a)"), 1e-5, 1e-4).ok());
  EXPECT_FALSE(check_tolerance(ew(1, "tanh(a)"), 10, 0).ok());
  // A tolerance float32 cannot meet is refused too (unfair to solvers).
  auto tight = check_tolerance(ew(2, "mul(exp(a),b)"), 0, 1e-12);
  ASSERT_FALSE(tight.ok());
  EXPECT_NE(tight.message().find("float32"), std::string::npos) << tight.message();
  // Reductions: a sum of [-1, 1] values refuses an atol that covers every row sum.
  gen_op red;
  red.fam = family::red;
  red.reduce = "sum";
  EXPECT_TRUE(check_tolerance(red, 1e-3, 1e-4).ok());
  EXPECT_FALSE(check_tolerance(red, 1000, 0).ok());
}

TEST(TaskgenSplits, DisjointByCanonicalFormAndComposition) {
  std::set<std::string> train_canon, train_comp, inst_canon, comp_canon, comp_comp;
  for (auto& t : big_suite()) {
    auto c = canonical_form(t.op), k = composition(t.op);
    EXPECT_EQ(classify(t.op), t.kind) << t.name;
    if (t.kind == gen_kind::train) {
      train_canon.insert(c);
      train_comp.insert(k);
    } else if (t.kind == gen_kind::eval_instance) {
      inst_canon.insert(c);
    } else {
      comp_canon.insert(c);
      comp_comp.insert(k);
    }
  }
  ASSERT_FALSE(inst_canon.empty());
  ASSERT_FALSE(comp_comp.empty());
  for (auto& c : inst_canon)
    EXPECT_FALSE(train_canon.count(c)) << c;
  for (auto& c : comp_canon)
    EXPECT_FALSE(train_canon.count(c)) << c;
  // Held-out compositions: no training task has one (templates and op combinations, not just
  // constants).
  for (auto& k : comp_comp)
    EXPECT_FALSE(train_comp.count(k)) << k;
  // Held-out instances are new operators of compositions that are trained (of the compositions of
  // each family's first 60 train tasks, so all of them here).
  int trained = 0;
  for (auto& t : big_suite())
    if (t.kind == gen_kind::eval_instance)
      trained += train_comp.count(composition(t.op)) > 0;
  EXPECT_EQ(trained, static_cast<int>(inst_canon.size()));
}

TEST(TaskgenSplits, NoGeneratedTaskIsABundledEvalOperator) {
  std::set<std::string> held;
  for (auto& [name, op] : eval_split_operators())
    held.insert(composition(op));
  ASSERT_GE(held.size(), 10u);
  for (auto& t : big_suite()) {
    EXPECT_FALSE(held.count(composition(t.op))) << t.name << " is " << composition(t.op);
    EXPECT_FALSE(held.count(canonical_form(t.op))) << t.name;
  }
  // Every bundled eval-split task is either expressed here (and so excluded) or outside the
  // families altogether.
  auto suite = env::load_task_suite(std::string(LEAP_SOURCE_DIR) + "/tasks");
  ASSERT_TRUE(suite.ok()) << suite.message();
  std::set<std::string> covered;
  for (auto& [name, op] : eval_split_operators())
    covered.insert(name);
  for (auto& n : eval_split_operators_outside_families())
    covered.insert(n);
  for (auto& t : *suite)
    if (t.split == env::task_split::eval) {
      EXPECT_TRUE(covered.count(t.name)) << t.name << " is an eval task the generator does not know";
    }
}

// The layout family (transpose, 3-D permute, row and column gathers by an int32 index
// array, strided slices, concatenation) and the stencil family (3x3 stencils under four border
// rules, 2-D pooling) are generated with every variant, in the suite's format.
TEST(TaskgenFamilies, LayoutAndStencilGenerateEveryVariant) {
  std::map<std::string, int> layout, stencil, borders;
  for (auto& t : big_suite()) {
    if (t.op.fam == family::layout)
      ++layout[t.op.variant];
    if (t.op.fam == family::stencil) {
      ++stencil[t.op.variant == "pool2d" ? "pool2d" : "3x3"];
      if (t.op.variant != "pool2d")
        ++borders[t.op.border];
    }
  }
  for (auto v : {"transpose", "permute", "gather_rows", "gather_cols", "slice", "concat"})
    EXPECT_GE(layout[v], 3) << v;
  EXPECT_GE(stencil["pool2d"], 10);
  EXPECT_GE(stencil["3x3"], 10);
  for (auto b : {"zero", "clamp", "mirror", "valid"})
    EXPECT_GE(borders[b], 3) << b;
  for (auto& [v, n] : layout)
    std::printf("[ layout  ] %-12s %d\n", v.c_str(), n);
  for (auto& [v, n] : stencil)
    std::printf("[ stencil ] %-12s %d\n", v.c_str(), n);
  // The gathers take their indices as an int32 array whose values lie inside the gathered axis
  // in every size set.
  for (auto& t : big_suite()) {
    if (t.op.fam != family::layout || t.op.variant.rfind("gather", 0) != 0)
      continue;
    const auto& s = t.spec;
    ASSERT_EQ(s.args[1].p.name, "idx") << t.name;
    EXPECT_EQ(s.args[1].p.kind, env::scalar_kind::i32) << t.name;
    EXPECT_EQ(s.args[1].init.kind, env::init_dist::randint) << t.name;
    for (auto& ss : s.sizes)
      EXPECT_LT(s.args[1].init.b, ss.at(t.op.variant == "gather_rows" ? "rows" : "cols")) << t.name;
    EXPECT_EQ(s.category, env::task_category::indexing) << t.name;
  }
}

TEST(TaskgenFamilies, NewFamiliesAreStableByNameUnderASeed) {
  gen_options o;
  o.seed = 11;
  o.train = 27; // three of each of the nine families
  o.eval_compositions = 9;
  auto a = generate_suite(o);
  ASSERT_TRUE(a.ok()) << a.message();
  int checked = 0;
  for (auto& t : *a) {
    if (t.op.fam != family::layout && t.op.fam != family::stencil)
      continue;
    auto one = generate_task(11, t.name);
    ASSERT_TRUE(one.ok()) << one.message();
    EXPECT_EQ(one->toml, t.toml) << t.name;
    EXPECT_EQ(one->reference, t.reference) << t.name;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  EXPECT_TRUE(generate_task(11, "gen_layout_t00002").ok());
  EXPECT_TRUE(generate_task(11, "gen_stencil_t00002").ok());
}

// The generator's own evaluation (the tolerance check's ground truth, and what the oracle test
// compares LibTorch with) on hand-checked cases.
TEST(TaskgenFamilies, HandCheckedLayoutAndStencilCases) {
  auto v = expr::v("v");
  // slice x[1::2, ::3] of a 4 x 5 matrix 0..19: rows 1, 3 and columns 0, 3
  gen_op sl;
  sl.fam = family::layout;
  sl.variant = "slice";
  sl.start0 = 1;
  sl.step0 = 2;
  sl.step1 = 3;
  std::vector<double> x20;
  for (int i = 0; i < 20; ++i)
    x20.push_back(i);
  EXPECT_EQ(evaluate(sl, {{"rows", 4}, {"cols", 5}}, {{"x", x20}}), (std::vector<double>{5, 8, 15, 18}));
  // permute "201" of a 2 x 2 x 3 tensor: y[k, i, j] = x[i, j, k]
  gen_op pm;
  pm.fam = family::layout;
  pm.variant = "permute";
  pm.perm = "201";
  std::vector<double> x12(x20.begin(), x20.begin() + 12);
  EXPECT_EQ(evaluate(pm, {{"A", 2}, {"B", 2}, {"C", 3}}, {{"x", x12}}),
            (std::vector<double>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  // gather columns 2, 0, 2 of a 2 x 3 matrix, squared
  gen_op gc;
  gc.fam = family::layout;
  gc.variant = "gather_cols";
  gc.map = expr::f("square", {v});
  EXPECT_EQ(evaluate(gc, {{"rows", 2}, {"cols", 3}, {"n", 3}}, {{"x", {1, 2, 3, 4, 5, 6}}, {"idx", {2, 0, 2}}}),
            (std::vector<double>{9, 1, 9, 36, 16, 36}));
  // 4-neighbour Laplacian of a 1 x 3 x 3 image 0..8 at its centre and corners, per border rule
  gen_op lp;
  lp.fam = family::stencil;
  lp.variant = "laplace4";
  std::vector<double> x9(x20.begin(), x20.begin() + 9);
  env::size_set s33{{"C", 1}, {"H", 3}, {"W", 3}};
  lp.border = "valid";
  EXPECT_EQ(evaluate(lp, s33, {{"x", x9}}), (std::vector<double>{0})); // 1 + 3 + 5 + 7 - 16
  lp.border = "zero";
  auto z = evaluate(lp, s33, {{"x", x9}});
  ASSERT_EQ(z.size(), 9u);
  EXPECT_EQ(z[0], 4);  // 1 + 3 - 0 (outside neighbours 0)
  EXPECT_EQ(z[8], -20); // 5 + 7 - 32
  lp.border = "clamp";
  auto c = evaluate(lp, s33, {{"x", x9}});
  EXPECT_EQ(c[0], 4);  // 0 + 0 + 1 + 3 - 0: up and left read x[0, 0]
  EXPECT_EQ(c[8], -4); // 5 + 7 + 8 + 8 - 32
  lp.border = "mirror";
  auto m = evaluate(lp, s33, {{"x", x9}});
  EXPECT_EQ(m[0], 8);  // up reads row 1 (3), left reads column 1 (1): 3 + 3 + 1 + 1
  EXPECT_EQ(m[8], -8); // 5 + 5 + 7 + 7 - 32
  // 2-D pooling: 2 x 2 windows, stride 2, sum over a 1 x 2 x 4 image
  gen_op pl;
  pl.fam = family::stencil;
  pl.variant = "pool2d";
  pl.reduce = "sum";
  pl.window = 2;
  pl.stride = 2;
  EXPECT_EQ(evaluate(pl, {{"C", 1}, {"H", 2}, {"W", 4}}, {{"x", {1, 2, 3, 4, 5, 6, 7, 8}}}), (std::vector<double>{14, 22}));
  // The IR round-trips the new fields.
  auto back = parse_op(serialize(sl));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(canonical_form(*back), canonical_form(sl));
  EXPECT_EQ(composition(sl), "layout;variant=slice;start0=#;step0=#;start1=#;step1=#;map=v");
  back = parse_op(serialize(lp));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(canonical_form(*back), canonical_form(lp));
}

// Deterministic: a task generated alone by name (seed 1) is the one a list of names gave.
void expect_alone_equals_listed(const gen_task& listed) {
  auto again = generate_task(1, listed.name);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->toml, listed.toml) << listed.name;
  EXPECT_EQ(again->reference, listed.reference) << listed.name;
}

// A paraphrase (gen_<family>_p<n>) is train operator n worded otherwise: the same canonical
// form, the train split, a deterministic text; elementwise ones name their buffers otherwise
// (their signature, prose and reference all use the shown names) and write some selects as
// "s if p > q, else t".
TEST(TaskgenParaphrases, SameOperatorOtherNamesAndWording) {
  std::vector<std::string> plain, para;
  for (int i = 0; i < 120; ++i) {
    plain.push_back(task_name(family::ew, gen_kind::train, i));
    para.push_back(paraphrase_name(family::ew, i));
  }
  for (int i = 0; i < 6; ++i) {
    plain.push_back(task_name(family::red, gen_kind::train, i));
    para.push_back(paraphrase_name(family::red, i));
  }
  auto t = generate_tasks(1, plain);
  auto p = generate_tasks(1, para);
  ASSERT_TRUE(t.ok()) << t.message();
  ASSERT_TRUE(p.ok()) << p.message();
  std::set<std::string> signatures;
  int renamed = 0, piecewise = 0;
  for (std::size_t i = 0; i < para.size(); ++i) {
    const auto& a = (*t)[i];
    const auto& b = (*p)[i];
    EXPECT_EQ(b.name, para[i]);
    EXPECT_TRUE(b.paraphrase);
    EXPECT_FALSE(a.paraphrase);
    EXPECT_EQ(canonical_form(b.op), canonical_form(a.op)) << b.name;
    EXPECT_EQ(b.spec.split, env::task_split::train) << b.name;
    EXPECT_NE(b.toml, a.toml) << b.name;
    // The reference's operator line carries the names, so the oracle finds the buffers.
    auto op = op_of_reference(b.reference);
    ASSERT_TRUE(op.ok()) << op.message();
    EXPECT_EQ(op->names, b.op.names) << b.name;
    if (b.op.fam != family::ew) {
      EXPECT_TRUE(b.op.names.empty()) << b.name;
      continue;
    }
    // The signature, the formula's line and the kernel use the shown names.
    std::string out = b.op.names.count("out") ? b.op.names.at("out") : "out";
    EXPECT_NE(b.spec.description.find("\n" + out + "[i] = "), std::string::npos) << b.name << "\n" << b.spec.description;
    EXPECT_NE(b.spec.reference_source.find("  " + out + "[i] = "), std::string::npos) << b.name;
    std::string args;
    for (const auto& arg : b.spec.args)
      args += arg.p.name + ",";
    std::set<std::string> shown_names;
    for (const auto& [own, shown] : b.op.names)
      shown_names.insert(shown);
    for (const auto& [own, shown] : b.op.names) {
      EXPECT_NE(args.find(shown + ","), std::string::npos) << b.name << ": " << args;
      if (!shown_names.count(own)) { // an own name may be shown for another buffer (x, s, b)
        EXPECT_EQ(b.spec.reference_source.find(" " + own + "[i]"), std::string::npos) << b.name << " keeps " << own;
      }
    }
    renamed += !b.op.names.empty();
    piecewise += b.spec.description.find(", else ") != std::string::npos;
    signatures.insert(args);
  }
  EXPECT_GT(renamed, 80);                // of 120: most elementwise paraphrases rename
  // Elementwise paraphrases are called by a snake_case name of their operations in the prompt
  // (task.toml `title`), never the name of a bundled task; the plain tasks keep theirs.
  std::set<std::string> bundled;
  for (const auto& e : std::filesystem::directory_iterator(LEAP_SOURCE_DIR "/tasks"))
    bundled.insert(e.path().filename().string());
  ASSERT_GT(bundled.size(), 60u);
  std::set<std::string> titles;
  const std::regex snake("[a-z][a-z0-9]*(_[a-z0-9]+)+");
  for (std::size_t i = 0; i < para.size(); ++i) {
    EXPECT_TRUE((*t)[i].spec.title.empty()) << (*t)[i].name;
    const auto& b = (*p)[i];
    if (b.op.fam != family::ew)
      continue;
    EXPECT_TRUE(std::regex_match(b.spec.title, snake)) << b.name << ": '" << b.spec.title << "'";
    EXPECT_FALSE(bundled.count(b.spec.title)) << b.name << " is titled like a bundled task: " << b.spec.title;
    titles.insert(b.spec.title);
  }
  EXPECT_GT(titles.size(), 60u);
  EXPECT_GE(signatures.size(), 15u);     // many signatures, not one per arity
  EXPECT_GT(piecewise, 0);
  expect_alone_equals_listed((*p)[7]);
  auto name = paraphrase_of("gen_ew_t00042");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "gen_ew_p00042");
  EXPECT_FALSE(paraphrase_of("gen_ew_i00001").ok());
  EXPECT_FALSE(paraphrase_of("gen_ew_p00001").ok());
  EXPECT_FALSE(paraphrase_of("vector_add").ok());
}

// A written form (gen_<family>_w<n>) is train operator n worded as a paraphrase of its own and
// laid out as the hand-written tasks are: one paragraph, wrapped at 100 columns, the formula
// inline, either after the opener's line or run on from it. The names it shows reach the
// signature and the reference; the text is deterministic.
TEST(TaskgenWritten, SameOperatorWordedOtherwiseAndLaidOutAsProse) {
  std::vector<std::string> plain, para, written;
  auto add = [&](family f, int count) {
    for (int i = 0; i < count; ++i) {
      plain.push_back(task_name(f, gen_kind::train, i));
      para.push_back(paraphrase_name(f, i));
      written.push_back(written_name(f, i));
    }
  };
  add(family::ew, 60);
  for (auto f : all_families())
    if (f != family::ew)
      add(f, 2);
  auto t = generate_tasks(1, plain);
  auto p = generate_tasks(1, para);
  auto w = generate_tasks(1, written);
  ASSERT_TRUE(t.ok()) << t.message();
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_TRUE(w.ok()) << w.message();
  int opener_alone = 0, run_on = 0, formula_inline = 0, other_names = 0, no_range = 0, one_range = 0;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const auto& a = (*t)[i];
    const auto& pp = (*p)[i];
    const auto& b = (*w)[i];
    EXPECT_EQ(b.name, written[i]);
    EXPECT_TRUE(b.written && b.paraphrase) << b.name;
    EXPECT_FALSE(pp.written || a.written) << b.name;
    EXPECT_EQ(canonical_form(b.op), canonical_form(a.op)) << b.name;
    EXPECT_EQ(b.spec.split, env::task_split::train) << b.name;
    EXPECT_NE(b.toml, a.toml) << b.name;
    EXPECT_NE(b.toml, pp.toml) << b.name;
    auto op = op_of_reference(b.reference);
    ASSERT_TRUE(op.ok()) << op.message();
    EXPECT_EQ(op->names, b.op.names) << b.name;
    other_names += b.op.names != pp.op.names;
    std::string args;
    for (const auto& arg : b.spec.args)
      args += arg.p.name + ",";
    for (const auto& [own, shown] : b.op.names)
      EXPECT_NE(args.find(shown + ","), std::string::npos) << b.name << ": " << args;
    // The paragraph: the description's lines before the two closing ones that every task ends
    // with. Each line is a wrapped one (the next line's first word would not have fitted on it)
    // except, at most, the opener's last line when the formula starts a line of its own.
    auto lines = split_lines(b.spec.description);
    while (!lines.empty() && trim(lines.back()).empty())
      lines.pop_back();
    ASSERT_GT(lines.size(), 3u) << b.name;
    lines.resize(lines.size() - 2);
    int early = 0;
    for (std::size_t k = 0; k + 1 < lines.size(); ++k) {
      const auto next = lines[k + 1].substr(0, lines[k + 1].find(' '));
      EXPECT_LE(lines[k].size(), 100u) << b.name;
      early += lines[k].size() + 1 + next.size() <= 100;
    }
    EXPECT_LE(early, 1) << b.name << ":\n" << b.spec.description;
    (early == 1 ? opener_alone : run_on) += 1;
    if (b.op.fam == family::ew) {
      const std::string out = b.op.names.count("out") ? b.op.names.at("out") : "out";
      const auto at = b.spec.description.find(out + "[i] = ");
      ASSERT_NE(at, std::string::npos) << b.name << "\n" << b.spec.description;
      formula_inline += at > 0 && b.spec.description[at - 1] == ' ';
      // The ranges: every input's, one input's alone (of two or more), or none.
      const std::string flat = std::regex_replace(b.spec.description, std::regex("\n"), " ");
      int stated = 0;
      for (const auto& arg : b.spec.args)
        stated += arg.role == env::arg_role::input
                  && (flat.find(" " + arg.p.name + " lies in [") != std::string::npos
                      || flat.find(" " + arg.p.name + " in [") != std::string::npos
                      || flat.find("(" + arg.p.name + " in [") != std::string::npos);
      no_range += stated == 0;
      one_range += stated == 1 && b.op.inputs > 1;
    }
  }
  EXPECT_GT(opener_alone, 10);
  EXPECT_GT(run_on, 10);
  EXPECT_GT(formula_inline, 10);  // of 60: "for 0 <= i < n, out[i] = ..." on one line
  EXPECT_GT(other_names, 30);     // a draw of its own, not the paraphrase's names
  EXPECT_GT(no_range, 3);         // so the parameter list is read from the signature
  EXPECT_GT(one_range, 3);
  expect_alone_equals_listed((*w)[3]);
  auto name = written_of("gen_red_t00042");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "gen_red_w00042");
  EXPECT_FALSE(written_of("gen_ew_w00001").ok());
  EXPECT_FALSE(written_of("gen_ew_p00001").ok());
  EXPECT_FALSE(written_of("gen_ew_c00001").ok());
  EXPECT_FALSE(written_of("relu").ok());
}

TEST(TaskgenParaphrases, NamesSerialiseAndBadNamesAreRefused) {
  gen_op op = ew(3, "add(a,mul(c,sub(b,a)))");
  op.names = {{"a", "x"}, {"b", "s"}, {"c", "b"}, {"out", "y"}}; // a shown name may be another's own
  auto back = parse_op(serialize(op));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->names, op.names);
  EXPECT_EQ(canonical_form(*back), canonical_form(ew(3, "add(a,mul(c,sub(b,a)))")));
  gen_op plain = ew(1, "exp(a)");
  EXPECT_EQ(serialize(plain).find("names="), std::string::npos); // plain operator lines as before
  auto base = serialize(plain);
  EXPECT_FALSE(parse_op(base + ";names=a:x,out:x").ok());  // two buffers shown as one
  EXPECT_FALSE(parse_op(base + ";names=a:1x").ok());       // not an identifier
  EXPECT_FALSE(parse_op(base + ";names=a").ok());
}
