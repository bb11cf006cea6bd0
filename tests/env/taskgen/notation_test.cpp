// The notation forms (gen_<family>_n<n>): train operator n worded in the hand-written tasks'
// mathematical notation, its buffers under names of its own, pooling windows sometimes passed as
// ints; the same operator as the train task, deterministic, and the shown names in the signature
// and the reference. Pure: no compiler, no LibTorch (the oracle's agreement is in
// tests/env/oracles, the real build and run in tests/runtime/commands/gen_verify_e2e_test.cpp).
#include "common/strings.hpp"
#include "env/taskgen/detail.hpp"
#include "env/taskgen/generator.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace leap;
using namespace leap::taskgen;

namespace {

std::vector<std::string> names_of(family f, int count, std::string (*name)(family, int)) {
  std::vector<std::string> v;
  for (int i = 0; i < count; ++i)
    v.push_back(name(f, i));
  return v;
}

std::string train_name(family f, int i) { return task_name(f, gen_kind::train, i); }

std::string flat(const std::string& s) { return std::regex_replace(s, std::regex("\n"), " "); }

} // namespace

TEST(TaskgenNotation, SameOperatorInTheHandWrittenNotation) {
  // What every family's notation must show (flattened description), and how many of its first
  // 12 notation forms show buffer names other than the family's own.
  const std::map<family, std::regex> shows{
    {family::red, std::regex(R"(\[[a-z]\] = (.*(sum|max|min)_[a-z{]|the smallest [a-z] with))")},
    {family::scan, std::regex(R"(\[[a-z], [a-z]\] = (sum|max|min)_\{)")},
    {family::softmax, std::regex(R"(with .*m = max_k )")},
    {family::pool, std::regex(R"(y\[c, [a-z]\] = .*_\{0 <= [a-z] < ([0-9]+|k)\} )")},
    {family::matmul, std::regex(R"(with [a-z]+ = sum_k A\[i, k\] \* B\[k, j\])")}};
  int renamed = 0, pool_params = 0, pool_literal = 0, torch_calls = 0;
  for (const auto& [f, pattern] : shows) {
    auto plain = generate_tasks(1, names_of(f, 12, &train_name));
    auto written = generate_tasks(1, names_of(f, 12, &written_name));
    auto notation = generate_tasks(1, names_of(f, 12, &notation_name));
    auto again = generate_tasks(1, names_of(f, 12, &notation_name));
    ASSERT_TRUE(plain.ok()) << plain.message();
    ASSERT_TRUE(written.ok()) << written.message();
    ASSERT_TRUE(notation.ok()) << notation.message();
    ASSERT_TRUE(again.ok()) << again.message();
    for (std::size_t i = 0; i < notation->size(); ++i) {
      const auto& t = (*plain)[i];
      const auto& n = (*notation)[i];
      EXPECT_EQ(n.name, notation_name(f, static_cast<int>(i)));
      EXPECT_TRUE(n.notation && n.paraphrase && !n.written) << n.name;
      EXPECT_FALSE(t.notation || (*written)[i].notation) << n.name;
      EXPECT_EQ(canonical_form(n.op), canonical_form(t.op)) << n.name;
      EXPECT_EQ(n.spec.split, env::task_split::train) << n.name;
      EXPECT_NE(n.toml, t.toml) << n.name;
      EXPECT_NE(n.toml, (*written)[i].toml) << n.name;
      EXPECT_EQ(n.toml, (*again)[i].toml) << n.name;           // deterministic
      EXPECT_EQ(n.reference, (*again)[i].reference) << n.name;
      const std::string d = flat(n.spec.description);
      EXPECT_TRUE(std::regex_search(d, pattern)) << n.name << ":\n" << n.spec.description;
      EXPECT_EQ(d.find(" over j in [0, "), std::string::npos) << n.name; // not the plain wording
      torch_calls += d.find("(as torch.") != std::string::npos || d.find("(as -torch.") != std::string::npos;
      // The shown names reach the signature, the reference's kernels and its operator line.
      auto op = op_of_reference(n.reference);
      ASSERT_TRUE(op.ok()) << op.message();
      EXPECT_EQ(op->names, n.op.names) << n.name;
      renamed += !n.op.names.empty();
      for (const auto& [own, shown] : n.op.names) {
        EXPECT_NE(n.spec.signature.find(" " + shown + ","), std::string::npos) << n.name << ": " << n.spec.signature;
        EXPECT_NE(n.reference.find(" " + shown + ","), std::string::npos) << n.name;
      }
      if (f == family::pool) {
        const bool params = n.spec.signature.find("int k, int s)") != std::string::npos;
        (params ? pool_params : pool_literal) += 1;
        if (params)
          for (const auto& sz : n.spec.sizes) { // every size set fixes the operator's window
            EXPECT_EQ(sz.at("k"), n.op.window) << n.name;
            EXPECT_EQ(sz.at("s"), n.op.stride) << n.name;
          }
      }
    }
  }
  EXPECT_GT(renamed, 20);    // of the 48 renamable ones
  EXPECT_GT(pool_params, 2); // k and s as ints, as the suite's avgpool1d takes them
  EXPECT_GT(pool_literal, 2);
  EXPECT_GT(torch_calls, 8);
}

// Elementwise notation forms name a constant (`alpha * (exp(x[i]) - 1) with alpha = 1`) or
// bind the inputs (`x * tanh(softplus(x)) with x = x[i]`) in about half of them each.
TEST(TaskgenNotation, ElementwiseNamedConstantsAndBindings) {
  auto plain = generate_tasks(1, names_of(family::ew, 80, &train_name));
  auto notation = generate_tasks(1, names_of(family::ew, 80, &notation_name));
  ASSERT_TRUE(plain.ok()) << plain.message();
  ASSERT_TRUE(notation.ok()) << notation.message();
  int constants = 0, bindings = 0;
  const std::regex constant(R"( with (.* and |.*, )?(alpha|beta|gamma|delta|k|scale|lam|eps) = -?[0-9.]+)");
  for (std::size_t i = 0; i < notation->size(); ++i) {
    const auto& n = (*notation)[i];
    EXPECT_EQ(canonical_form(n.op), canonical_form((*plain)[i].op)) << n.name;
    const std::string d = flat(n.spec.description);
    constants += std::regex_search(d, constant);
    for (const auto& arg : n.spec.args)
      if (arg.role == env::arg_role::input && d.find(arg.p.name + " = " + arg.p.name + "[i]") != std::string::npos) {
        ++bindings;
        break;
      }
  }
  EXPECT_GT(constants, 15) << "of 80";
  EXPECT_GT(bindings, 20) << "of 80";
}

TEST(TaskgenNotation, NamesAndRenaming) {
  auto name = notation_of("gen_pool_t00042");
  ASSERT_TRUE(name.ok()) << name.message();
  EXPECT_EQ(*name, "gen_pool_n00042");
  EXPECT_FALSE(notation_of("gen_pool_n00042").ok());
  EXPECT_FALSE(notation_of("gen_ew_w00001").ok());
  EXPECT_FALSE(notation_of("gen_ew_i00001").ok());
  EXPECT_FALSE(notation_of("elu").ok());
  auto f = family_of("gen_scan_n00003");
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(*f, family::scan);
  EXPECT_FALSE(generate_task(1, "gen_ew_x00001").ok());
  // Broadcast, layout and stencil tasks have no notation of their own: another written form.
  auto b = generate_task(1, "gen_bcast_n00000");
  auto w = generate_task(1, "gen_bcast_w00000");
  ASSERT_TRUE(b.ok()) << b.message();
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(canonical_form(b->op), canonical_form(w->op));
  EXPECT_NE(b->toml, w->toml);
  // Whole identifiers only, never a member (blockIdx.x) or a longer name.
  using detail::rename_identifiers;
  EXPECT_EQ(rename_identifiers("int i = blockIdx.x; out[i] = x[i] + xx[i] + x2;", {{"x", "src"}, {"out", "y"}}),
            "int i = blockIdx.x; y[i] = src[i] + xx[i] + x2;");
  EXPECT_EQ(rename_identifiers("x", {{"x", "a"}}), "a");
  EXPECT_EQ(rename_identifiers("x", {}), "x");
}
