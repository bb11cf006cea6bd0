// Tests of the corpus generator (policy/corpus): determinism by seed, coverage of every bundled
// task, markup and mutators that change exactly what they claim, and typos that really fail nvcc
// (their origins compile). Labelling through the environment is tested in tests/runtime.
#include "common/fs.hpp"
#include "env/process.hpp"
#include "env/task.hpp"
#include "env/taskgen/generator.hpp"
#include "policy/corpus/kernel_corpus.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

using namespace leap;
using namespace leap::corpus;

namespace {

const std::vector<env::task_spec>& full_suite() {
  static const auto tasks = [] {
    auto t = env::load_task_suite(std::string(LEAP_SOURCE_DIR) + "/tasks");
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.message());
    return t.ok() ? *t : std::vector<env::task_spec>{};
  }();
  return tasks;
}

// The train split: the tasks the corpus covers (the eval split is held out).
const std::vector<env::task_spec>& suite() {
  static const auto tasks = [] {
    std::vector<env::task_spec> out;
    for (auto& t : full_suite())
      if (t.split == env::task_split::train)
        out.push_back(t);
    return out;
  }();
  return tasks;
}

std::vector<variant> gen(std::uint64_t seed) {
  generate_options o;
  o.seed = seed;
  auto v = generate(suite(), o);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.message());
  return v.ok() ? *v : std::vector<variant>{};
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size()))
    ++n;
  return n;
}

// Lines of a that differ from b (same line count assumed by the caller when it matters).
int differing_lines(const std::string& a, const std::string& b) {
  auto la = std::vector<std::string>{}, lb = std::vector<std::string>{};
  std::string cur;
  for (char c : a) {
    if (c == '\n') { la.push_back(cur); cur.clear(); } else cur += c;
  }
  la.push_back(cur);
  cur.clear();
  for (char c : b) {
    if (c == '\n') { lb.push_back(cur); cur.clear(); } else cur += c;
  }
  lb.push_back(cur);
  if (la.size() != lb.size())
    return -1;
  int d = 0;
  for (std::size_t i = 0; i < la.size(); ++i)
    d += la[i] != lb[i];
  return d;
}

} // namespace

TEST(CorpusMarkup, RenderAndMutate) {
  const std::string m = "if (i $< n) @G{if (j $>= k) return;}G@ x = @I{a[i]~|~a[i+1]}I@; $SYNC\n"
                        "@Z{cudaMemset(p, 0, 4);}Z@\ns = @R{s + v~|~v}R@;\n";
  EXPECT_EQ(render(m), "if (i < n) if (j >= k) return; x = a[i]; __syncthreads();\ncudaMemset(p, 0, 4);\ns = s + v;\n");
  EXPECT_EQ(count_sites(m, bug_kind::off_by_one), 2);
  EXPECT_EQ(count_sites(m, bug_kind::missing_bounds), 1);
  EXPECT_EQ(count_sites(m, bug_kind::missing_sync), 1);
  EXPECT_EQ(count_sites(m, bug_kind::uninit_output), 1);
  EXPECT_EQ(*mutate(m, bug_kind::off_by_one, 0), "if (i <= n) if (j >= k) return; x = a[i]; __syncthreads();\ncudaMemset(p, 0, 4);\ns = s + v;\n");
  EXPECT_EQ(*mutate(m, bug_kind::off_by_one, 1), "if (i < n) if (j > k) return; x = a[i]; __syncthreads();\ncudaMemset(p, 0, 4);\ns = s + v;\n");
  EXPECT_EQ(*mutate(m, bug_kind::missing_bounds, 0), "if (i < n)  x = a[i]; __syncthreads();\ncudaMemset(p, 0, 4);\ns = s + v;\n");
  EXPECT_EQ(*mutate(m, bug_kind::wrong_index, 0), "if (i < n) if (j >= k) return; x = a[i+1]; __syncthreads();\ncudaMemset(p, 0, 4);\ns = s + v;\n");
  // A removed marker that leaves a blank line drops the line.
  EXPECT_EQ(*mutate(m, bug_kind::uninit_output, 0), "if (i < n) if (j >= k) return; x = a[i]; __syncthreads();\ns = s + v;\n");
  EXPECT_EQ(*mutate(m, bug_kind::wrong_reduction, 0), "if (i < n) if (j >= k) return; x = a[i]; __syncthreads();\ncudaMemset(p, 0, 4);\ns = v;\n");
  EXPECT_FALSE(mutate(m, bug_kind::off_by_one, 2).ok());
  EXPECT_FALSE(mutate(m, bug_kind::typo_semicolon, 0).ok());
}

TEST(CorpusMarkup, CommentsAreDropped) {
  const std::string m = "// header\nint a = 1; // trailing\n  // indented\nconst char* s = \"a//b\";\n"
                        "@G{if (i $< n) return; // guard}G@\nint b = 2;\n";
  EXPECT_EQ(render(m), "int a = 1;\nconst char* s = \"a//b\";\nif (i < n) return;\nint b = 2;\n");
  EXPECT_EQ(*mutate(m, bug_kind::missing_bounds, 0), "int a = 1;\nconst char* s = \"a//b\";\nint b = 2;\n");
}

TEST(CorpusGenerator, DeterministicBySeed) {
  auto a = gen(7), b = gen(7), c = gen(8);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].source, b[i].source);
  }
  bool differs = a.size() != c.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i)
    differs = a[i].source != c[i].source;
  EXPECT_TRUE(differs) << "another seed should pick other styles, block sizes or bugs";
}

TEST(CorpusGenerator, EveryTaskHasStrategiesAndBugKinds) {
  // The train split only grows (22 tasks before the held-out split, 47 after); every task needs a
  // family.
  ASSERT_GE(suite().size(), 47u);
  for (auto& t : suite())
    EXPECT_FALSE(family_of(t.name).empty()) << t.name << " has no corpus family";
  auto all = gen(1);
  std::map<std::string, std::set<std::string>> strategies;
  std::map<std::string, int> solutions;
  std::map<std::string, std::set<bug_kind>> bugs;
  std::set<std::string> names;
  for (auto& v : all) {
    EXPECT_TRUE(names.insert(v.task + "/" + v.name).second) << "duplicate " << v.name;
    if (v.kind == variant_kind::solution) {
      ++solutions[v.task];
      strategies[v.task].insert(v.strategy);
    } else {
      bugs[v.task].insert(v.bug);
    }
  }
  for (auto& t : suite()) {
    EXPECT_GE(solutions[t.name], 4) << t.name;
    EXPECT_GE(strategies[t.name].size(), t.name == "attention_head" ? 2u : 3u) << t.name;
    EXPECT_GE(bugs[t.name].size(), 6u) << t.name;
    for (auto k : {bug_kind::typo_semicolon, bug_kind::typo_identifier, bug_kind::typo_type,
                   bug_kind::swapped_name, bug_kind::sampling_noise, bug_kind::typo_bracket,
                   bug_kind::off_by_one, bug_kind::wrong_index})
      EXPECT_TRUE(bugs[t.name].count(k)) << t.name << " lacks " << to_string(k);
  }
  // Kinds that need shared memory or atomics appear where those strategies exist.
  EXPECT_TRUE(bugs["matmul"].count(bug_kind::missing_sync));
  EXPECT_TRUE(bugs["softmax_rows"].count(bug_kind::missing_sync));
  EXPECT_TRUE(bugs["sum_reduce"].count(bug_kind::uninit_output));
  EXPECT_TRUE(bugs["histogram"].count(bug_kind::uninit_output));
  EXPECT_TRUE(bugs["row_max"].count(bug_kind::wrong_reduction));
  EXPECT_TRUE(bugs["row_argmax"].count(bug_kind::wrong_reduction));
  EXPECT_TRUE(bugs["softmax_cols"].count(bug_kind::missing_sync));
  EXPECT_TRUE(bugs["batchnorm"].count(bug_kind::missing_sync));
  EXPECT_TRUE(bugs["cross_entropy"].count(bug_kind::uninit_output));
  EXPECT_TRUE(bugs["mse_loss"].count(bug_kind::uninit_output));
  EXPECT_TRUE(bugs["exclusive_scan"].count(bug_kind::missing_sync));
}

// Regression: with four random naming styles per task the quickstart model learned the
// shared template but mixed names within one completion (a kernel defined as relu_ilp4 and
// launched as relu_kernel) and no turn-1 sample compiled. Every solution now has one style:
// the kernel is <task>_kernel (suffixed when a strategy has several), a named block constant
// when the file has one block size, the element op in apply_op. No comments: every completion
// token costs the quickstart model training time.
TEST(CorpusGenerator, OneCanonicalStyle) {
  for (std::uint64_t seed : {1, 5}) {
    for (auto& v : gen(seed)) {
      if (v.kind != variant_kind::solution)
        continue;
      EXPECT_NE(v.source.find("__global__ void " + v.task + "_kernel"), std::string::npos)
        << v.task << "/" << v.name;
      EXPECT_EQ(v.source.find("Kernel("), std::string::npos) << v.task << "/" << v.name;
      EXPECT_EQ(v.source.find("__global__ void k_"), std::string::npos) << v.task << "/" << v.name;
      EXPECT_EQ(v.source.find("const int gid"), std::string::npos) << v.task << "/" << v.name;
      EXPECT_EQ(v.source.find("//"), std::string::npos) << v.task << "/" << v.name;
      if (family_of(v.task) == "elementwise") {
        EXPECT_NE(v.source.find("apply_op("), std::string::npos) << v.task << "/" << v.name;
        EXPECT_NE(v.source.find("constexpr int k_block = "), std::string::npos) << v.name;
      }
    }
  }
}

TEST(CorpusGenerator, VariantsHonourTheCandidateContract) {
  for (auto& v : gen(3)) {
    const auto& t = *std::find_if(suite().begin(), suite().end(), [&](auto& s) { return s.name == v.task; });
    std::string params;
    for (auto& a : t.args)
      params += (params.empty() ? "" : ", ") + a.p.c_type() + " " + a.p.name;
    EXPECT_NE(v.source.find("#include <cuda_runtime.h>"), std::string::npos) << v.name;
    // A retyped parameter or a swapped name may break the entry point's parameter list (the
    // guards then reject it, a repair like any other).
    if (v.bug != bug_kind::typo_type && v.bug != bug_kind::swapped_name
        && v.bug != bug_kind::sampling_noise) {
      EXPECT_NE(v.source.find("extern \"C\" void solution(" + params + ")"), std::string::npos)
        << v.task << "/" << v.name;
    }
    EXPECT_EQ(v.source.find("$"), std::string::npos) << v.name;
    EXPECT_EQ(v.source.find("~|~"), std::string::npos) << v.name;
    EXPECT_EQ(v.source.find('\x01'), std::string::npos) << v.name;
  }
}

TEST(CorpusGenerator, MutatorsChangeWhatTheyClaim) {
  int checked = 0;
  for (auto& v : gen(5)) {
    if (v.kind != variant_kind::buggy)
      continue;
    ++checked;
    const auto& a = v.origin_source;
    const auto& b = v.source;
    ASSERT_NE(a, b) << v.name;
    ASSERT_FALSE(a.empty()) << v.name;
    switch (v.bug) {
    case bug_kind::off_by_one:
      EXPECT_EQ(differing_lines(a, b), 1) << v.name;
      EXPECT_TRUE(count(b, "<=") == count(a, "<=") + 1 || count(b, ">=") + 1 == count(a, ">="))
        << v.name;
      break;
    case bug_kind::missing_sync:
      EXPECT_EQ(count(b, "__syncthreads();") + 1, count(a, "__syncthreads();")) << v.name;
      break;
    case bug_kind::uninit_output:
      EXPECT_EQ(count(b, "cudaMemset"), 0u) << v.name;
      EXPECT_EQ(count(a, "cudaMemset"), 1u) << v.name;
      break;
    case bug_kind::missing_bounds:
      EXPECT_LT(b.size(), a.size()) << v.name;
      EXPECT_LT(count(b, "<") + count(b, ">"), count(a, "<") + count(a, ">")) << v.name;
      break;
    case bug_kind::wrong_index:
    case bug_kind::wrong_reduction:
      EXPECT_EQ(differing_lines(a, b), 1) << v.name;
      break;
    case bug_kind::typo_semicolon:
      EXPECT_EQ(count(b, ";") + 1, count(a, ";")) << v.name;
      EXPECT_EQ(differing_lines(a, b), 1) << v.name;
      break;
    case bug_kind::typo_identifier:
    case bug_kind::typo_type:
      EXPECT_EQ(differing_lines(a, b), 1) << v.name;
      break;
    case bug_kind::typo_bracket: {
      EXPECT_EQ(differing_lines(a, b), 1) << v.name;
      const auto closers = [&](const std::string& s) { return count(s, ")") + count(s, "]"); };
      EXPECT_EQ(std::abs(static_cast<int>(closers(b)) - static_cast<int>(closers(a))), 1) << v.name;
      break;
    }
    case bug_kind::sampling_noise:
      // Several slips, each on one line: at least one line differs, at most four.
      EXPECT_GE(differing_lines(a, b), 1) << v.name;
      EXPECT_LE(differing_lines(a, b), 4) << v.name;
      break;
    case bug_kind::swapped_name:
      // One word replaced by another: one line differs, and it has as many words as before.
      EXPECT_EQ(differing_lines(a, b), 1) << v.name;
      EXPECT_EQ(count(b, ";"), count(a, ";")) << v.name;
      break;
    case bug_kind::none:
      ADD_FAILURE() << "buggy variant without a bug kind: " << v.name;
    }
  }
  EXPECT_GT(checked, 150);
}

// inject_typo(src, kind, pick) succeeds and its source holds `expected`.
void expect_typo(const std::string& src, bug_kind kind, std::uint64_t pick, const std::string& expected) {
  auto v = inject_typo(src, kind, pick);
  ASSERT_TRUE(v.ok()) << to_string(kind) << " pick " << pick << ": " << v.message();
  EXPECT_NE(v->find(expected), std::string::npos) << to_string(kind) << " pick " << pick << ":\n" << *v;
}

// swapped_name picks among the uses of declared names from the first kernel on (members such as
// blockIdx.x are not uses), by `pick`. Here the names are {i, n, x, y} (sorted) and the 12 uses,
// in order, are x y n | i | i n y i x i x i. pick 3 is i's declaration, replaced by the name
// (0 + 1 + (3 / 12) % 3) % 4 = 1, n; pick 15 is the same use with (15 / 12) % 3 = 1, so x; pick 10
// is the last x (name 2), replaced by (2 + 1 + 0) % 4 = 3, y.
TEST(CorpusMarkup, SwappedNameReplacesOneUseByAnotherDeclaredName) {
  const std::string src = "constexpr int k_block = 128;\n"
                          "__global__ void k(const float* x, float* y, int n) {\n"
                          "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "  if (i < n) y[i] = x[i] + x[i];\n"
                          "}\n";
  expect_typo(src, bug_kind::swapped_name, 3, "  const int n = blockIdx.x * blockDim.x + threadIdx.x;");
  expect_typo(src, bug_kind::swapped_name, 15, "  const int x = blockIdx.x");
  expect_typo(src, bug_kind::swapped_name, 10, "y[i] = x[i] + y[i];");
  // k_block is declared before the first kernel and is not a candidate: line 1 never changes.
  for (std::uint64_t pick = 0; pick < 40; ++pick) {
    auto v = inject_typo(src, bug_kind::swapped_name, pick);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->substr(0, 29), src.substr(0, 29)) << pick;
    EXPECT_NE(*v, src) << pick;
  }
  EXPECT_FALSE(inject_typo("__global__ void k(int n) { }\n", bug_kind::swapped_name, 0).ok());
}

// typo_bracket: among the `)` and `]` of statement lines (not the kernel's own header, not a
// `return` line), `pick / 2` chooses one; an even pick drops it when it is a `)`, anything else
// doubles it. Here the closers, in order, are y[i]'s `]`, x[i]'s `]` and expf's `)`.
TEST(CorpusMarkup, TypoBracketDropsOrDoublesOneClosingBracket) {
  const std::string src = "__global__ void k(const float* x, float* y, int n) {\n"
                          "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "  if (i >= n) return;\n"
                          "  y[i] = expf(x[i]) * 2.0f;\n"
                          "}\n";
  expect_typo(src, bug_kind::typo_bracket, 4, "  y[i] = expf(x[i] * 2.0f;\n");    // dropped
  expect_typo(src, bug_kind::typo_bracket, 5, "  y[i] = expf(x[i])) * 2.0f;\n");  // doubled
  expect_typo(src, bug_kind::typo_bracket, 0, "  y[i]] = expf(x[i]) * 2.0f;\n");  // a `]` is never dropped
  for (std::uint64_t pick = 0; pick < 12; ++pick) {
    auto v = inject_typo(src, bug_kind::typo_bracket, pick);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->substr(0, v->find("  y[i]")), src.substr(0, src.find("  y[i]"))) << pick;
    EXPECT_EQ(std::abs(static_cast<int>(v->size()) - static_cast<int>(src.size())), 1) << pick;
  }
  EXPECT_FALSE(inject_typo("__global__ void k(int n) {\n  int a = n;\n}\n", bug_kind::typo_bracket, 0).ok());
}

// generate_options::kinds leaves the other kinds out without moving the seeded choices of the
// kept ones: the nine default kinds give exactly the full corpus minus the three newer kinds.
TEST(CorpusGenerator, KindsRestrictWithoutChangingTheRest) {
  generate_options all_opt;
  all_opt.seed = 3;
  auto all = generate(suite(), all_opt);
  ASSERT_TRUE(all.ok()) << all.message();
  generate_options nine = all_opt;
  for (auto k : all_bug_kinds())
    if (k != bug_kind::swapped_name && k != bug_kind::sampling_noise && k != bug_kind::typo_bracket)
      nine.kinds.push_back(k);
  auto some = generate(suite(), nine);
  ASSERT_TRUE(some.ok()) << some.message();
  std::vector<std::string> expected, got;
  std::size_t newer = 0;
  for (auto& v : *all) {
    if (v.bug == bug_kind::swapped_name || v.bug == bug_kind::sampling_noise
        || v.bug == bug_kind::typo_bracket) {
      ++newer;
      continue;
    }
    expected.push_back(v.task + "/" + v.name + "\n" + v.source);
  }
  for (auto& v : *some)
    got.push_back(v.task + "/" + v.name + "\n" + v.source);
  EXPECT_GE(newer, 3 * suite().size());
  EXPECT_EQ(got, expected);
}

// generate_options::solutions_per_task keeps each task's first N strategies of the full corpus,
// in order and unchanged, and derives every buggy variant from one of them.
TEST(CorpusGenerator, SolutionsPerTaskKeepsTheFirstStrategiesAndTheirBugs) {
  generate_options all_opt;
  all_opt.seed = 5;
  auto all = generate(suite(), all_opt);
  ASSERT_TRUE(all.ok()) << all.message();
  for (int n : {1, 2}) {
    generate_options few = all_opt;
    few.solutions_per_task = n;
    auto some = generate(suite(), few);
    ASSERT_TRUE(some.ok()) << some.message();
    std::map<std::string, std::vector<std::string>> first, kept;
    for (auto& v : *all)
      if (v.kind == variant_kind::solution && first[v.task].size() < static_cast<std::size_t>(n))
        first[v.task].push_back(v.name + "\n" + v.source);
    std::size_t bugs = 0, bugs_all = 0;
    for (auto& v : *all)
      bugs_all += v.kind == variant_kind::buggy;
    for (auto& v : *some) {
      if (v.kind == variant_kind::solution) {
        kept[v.task].push_back(v.name + "\n" + v.source);
        continue;
      }
      ++bugs;
      const auto& names = first[v.task];
      EXPECT_TRUE(std::any_of(names.begin(), names.end(), [&](const std::string& s) {
        return s == v.origin + "\n" + v.origin_source;
      })) << v.task << "/" << v.name << " derives from " << v.origin;
    }
    EXPECT_EQ(kept, first) << "n = " << n;
    EXPECT_GE(bugs, suite().size()) << "n = " << n; // the typo kinds apply to any strategy
    EXPECT_LT(bugs, bugs_all) << "n = " << n;
  }
}

TEST(CorpusGenerator, TyposDoNotCompileAndTheirOriginsDo) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc))
    GTEST_SKIP() << "no nvcc at " << nvcc;
  generate_options o;
  o.only_tasks = {"vector_add", "softmax_rows"};
  auto all = generate(suite(), o);
  ASSERT_TRUE(all.ok()) << all.message();
  auto dir = make_temp_dir(temp_root(), "leap-corpus-test-");
  ASSERT_TRUE(dir.ok()) << dir.message();
  auto compiles = [&](const std::string& src, const std::string& name) {
    auto path = *dir + "/" + name + ".cu";
    EXPECT_TRUE(write_file_atomic(path, src).ok());
    env::process_spec p;
    p.argv = {nvcc, "-cubin", "-arch=sm_90", "-o", *dir + "/" + name + ".cubin", path};
    p.timeout_seconds = 120;
    auto r = env::run_blocking(p);
    EXPECT_TRUE(r.started) << r.start_error;
    return r.success();
  };
  int typos = 0;
  std::set<std::string> origins_checked;
  for (auto& v : *all) {
    if (v.kind != variant_kind::buggy || !is_typo(v.bug) || v.task != "vector_add")
      continue;
    ++typos;
    EXPECT_FALSE(compiles(v.source, "typo" + std::to_string(typos))) << v.name << "\n" << v.source;
    if (origins_checked.insert(v.origin).second) {
      EXPECT_TRUE(compiles(v.origin_source, "origin" + std::to_string(typos))) << v.origin;
    }
  }
  EXPECT_EQ(typos, 4);  // a lost `;`, a misspelt identifier, a wrong pointer type, a bracket
  std::filesystem::remove_all(*dir);
}

// The corpus never holds an eval-split task. Every train task has a family; an eval
// task handed to the generator is refused, not quietly generated.
TEST(CorpusGenerator, HoldsOnlyTrainSplitTasks) {
  for (auto& t : suite())
    EXPECT_FALSE(family_of(t.name).empty()) << t.name << " (train split) has no corpus family";
  std::size_t held_out = 0;
  for (auto& t : full_suite()) {
    if (t.split != env::task_split::eval)
      continue;
    ++held_out;
    auto v = generate({t}, generate_options{});
    ASSERT_FALSE(v.ok()) << t.name;
    EXPECT_NE(v.message().find("'" + t.name + "' is in the eval split"), std::string::npos)
      << v.message();
  }
  EXPECT_GE(held_out, 15u);
  auto relu = *std::find_if(suite().begin(), suite().end(), [](auto& t) { return t.name == "relu"; });
  relu.split = env::task_split::eval;
  EXPECT_FALSE(generate({relu}, generate_options{}).ok());
}

// A generated task (env/taskgen) gets corpus variants without a hand-written
// family: its reference as the one solution (no comment lines, so not the serialised operator; no
// unused math helper) and bugs that act on any kernel text, each a real change of that source.
TEST(CorpusGenerated, ReferenceIsTheSolutionAndGenericBugsChangeIt) {
  taskgen::gen_options go;
  go.train = 14; // two per family, round-robin
  auto gen = taskgen::generate_suite(go);
  ASSERT_TRUE(gen.ok()) << gen.message();
  std::vector<env::task_spec> tasks;
  for (auto& t : *gen)
    tasks.push_back(t.spec);
  generate_options opt;
  opt.kinds = {bug_kind::off_by_one, bug_kind::missing_bounds, bug_kind::typo_semicolon,
               bug_kind::typo_identifier, bug_kind::typo_type, bug_kind::wrong_index};
  auto a = generate(tasks, opt);
  ASSERT_TRUE(a.ok()) << a.message();
  auto b = generate(tasks, opt);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->size(), b->size());
  std::map<std::string, std::string> solution;
  std::map<std::string, std::set<bug_kind>> kinds;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const auto& v = (*a)[i];
    EXPECT_EQ(v.source, (*b)[i].source) << v.name; // deterministic
    EXPECT_EQ(v.family, "generated");
    if (v.kind == variant_kind::solution) {
      EXPECT_EQ(v.name, "reference.naive");
      EXPECT_TRUE(solution.emplace(v.task, v.source).second) << v.task << ": two solutions";
      EXPECT_EQ(v.source.find("//"), std::string::npos) << v.source;
      EXPECT_NE(v.source.find("extern \"C\" void solution("), std::string::npos);
      // Every helper left is used: its name appears again after its definition.
      for (auto p = v.source.find("__device__ double "); p != std::string::npos;
           p = v.source.find("__device__ double ", p + 1)) {
        auto open = v.source.find('(', p);
        auto name = v.source.substr(p + 18, open - p - 18);
        EXPECT_NE(v.source.find(name + "(", open), std::string::npos) << v.task << ": " << name;
      }
      continue;
    }
    ASSERT_TRUE(solution.count(v.task)) << v.name << " before its solution";
    EXPECT_EQ(v.origin, "reference.naive");
    EXPECT_EQ(v.origin_source, solution[v.task]);
    EXPECT_NE(v.source, v.origin_source) << v.name;
    EXPECT_NE(v.bug, bug_kind::wrong_index) << "no wrong_index site in a generated reference";
    kinds[v.task].insert(v.bug);
    if (v.bug == bug_kind::off_by_one) { // the guard's `>=` became `>`, nothing else
      EXPECT_EQ(v.source.size() + 1, v.origin_source.size()) << v.name;
    }
    if (v.bug == bug_kind::missing_bounds) { // one line fewer: the guard
      EXPECT_EQ(std::count(v.source.begin(), v.source.end(), '\n') + 1,
                std::count(v.origin_source.begin(), v.origin_source.end(), '\n'))
        << v.name;
    }
  }
  EXPECT_EQ(solution.size(), tasks.size());
  for (auto& t : tasks) {
    EXPECT_TRUE(kinds[t.name].count(bug_kind::off_by_one)) << t.name;
    EXPECT_TRUE(kinds[t.name].count(bug_kind::typo_identifier)) << t.name;
  }
}

// generated_bugs_per_kind = 0 keeps a generated task's reference as its one variant (thousands
// of generated tasks labelled for turn-1 targets only) while the bundled tasks' bugs stay: the
// two counts are apart.
TEST(CorpusGenerated, GeneratedBugsAreCountedApartFromTheBundledOnes) {
  taskgen::gen_options go;
  go.train = 3;
  auto gen = taskgen::generate_suite(go);
  ASSERT_TRUE(gen.ok()) << gen.message();
  std::vector<env::task_spec> tasks;
  for (auto& t : *gen)
    tasks.push_back(t.spec);
  tasks.push_back(*std::find_if(suite().begin(), suite().end(), [](auto& t) { return t.name == "relu"; }));
  generate_options opt;
  opt.kinds = {bug_kind::off_by_one, bug_kind::typo_identifier};
  opt.generated_bugs_per_kind = 0;
  auto v = generate(tasks, opt);
  ASSERT_TRUE(v.ok()) << v.message();
  std::map<std::string, int> solutions, bugs;
  for (auto& x : *v)
    (x.kind == variant_kind::solution ? solutions : bugs)[x.task]++;
  for (auto& t : *gen) {
    EXPECT_EQ(solutions[t.name], 1) << t.name;
    EXPECT_EQ(bugs[t.name], 0) << t.name;
  }
  EXPECT_GE(bugs["relu"], 2); // one of each kind, as bugs_per_kind = 1 says
  opt.generated_bugs_per_kind = 1;
  auto w = generate(tasks, opt);
  ASSERT_TRUE(w.ok()) << w.message();
  std::map<std::string, int> bugs1;
  for (auto& x : *w)
    if (x.kind == variant_kind::buggy)
      bugs1[x.task]++;
  for (auto& t : *gen)
    EXPECT_EQ(bugs1[t.name], 2) << t.name;
  EXPECT_EQ(bugs1["relu"], bugs["relu"]);
  // generated_bug_tasks: only the listed generated task gets its bugs, the very same ones; the
  // others keep their turn-1 target alone, and the bundled task is untouched.
  opt.generated_bug_tasks = {(*gen)[1].spec.name};
  auto only = generate(tasks, opt);
  ASSERT_TRUE(only.ok()) << only.message();
  std::map<std::string, std::vector<std::string>> listed;
  std::map<std::string, int> solutions2;
  for (auto& x : *only)
    if (x.kind == variant_kind::buggy)
      listed[x.task].push_back(x.name + "\n" + x.source);
    else
      solutions2[x.task]++;
  std::vector<std::string> before;
  for (auto& x : *w)
    if (x.kind == variant_kind::buggy && x.task == (*gen)[1].spec.name)
      before.push_back(x.name + "\n" + x.source);
  EXPECT_EQ(listed[(*gen)[1].spec.name], before);
  EXPECT_TRUE(listed[(*gen)[0].spec.name].empty());
  EXPECT_TRUE(listed[(*gen)[2].spec.name].empty());
  EXPECT_EQ(static_cast<int>(listed["relu"].size()), bugs["relu"]);
  for (auto& t : *gen)
    EXPECT_EQ(solutions2[t.name], 1) << t.name;
}

// A broadcast-family reference that reduces x into a scratch buffer first has two guarded
// kernels; the off-by-one (and missing-bounds) bug must be in the kernel writing the task's output
// y, whose write past the end the environment sees, not in the scratch kernel's (an off-by-one
// there writes one element past a buffer nobody checks, so the "bug" was judged correct).
TEST(CorpusGenerated, GuardBugsEditTheKernelThatWritesTheOutput) {
  std::vector<env::task_spec> tasks;
  for (int i = 0; i < 40 && tasks.size() < 2; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "gen_bcast_t%05d", i);
    auto t = taskgen::generate_task(1, name);
    ASSERT_TRUE(t.ok()) << t.message();
    if (t->op.source == "rowred" || t->op.source == "colred")
      tasks.push_back(t->spec);
  }
  ASSERT_EQ(tasks.size(), 2u) << "no broadcast task with a reduced operand among the first 40";
  generate_options opt;
  opt.kinds = {bug_kind::off_by_one, bug_kind::missing_bounds};
  auto vs = generate(tasks, opt);
  ASSERT_TRUE(vs.ok()) << vs.message();
  int checked = 0;
  for (auto& v : *vs) {
    if (v.kind != variant_kind::buggy)
      continue;
    ASSERT_NE(v.origin_source.find("__global__ void gen_reduce("), std::string::npos) << v.task;
    // The scratch kernel's guard is untouched; the output kernel's is edited.
    EXPECT_NE(v.source.find("  if (o >= "), std::string::npos) << v.name << "\n" << v.source;
    const std::string out_guard = "  if (i >= (long long)rows * cols) return;";
    ASSERT_NE(v.origin_source.find(out_guard), std::string::npos) << v.task;
    EXPECT_EQ(v.source.find(out_guard), std::string::npos) << v.name << "\n" << v.source;
    if (v.bug == bug_kind::off_by_one) {
      EXPECT_NE(v.source.find("  if (i > (long long)rows * cols) return;"), std::string::npos) << v.name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}
