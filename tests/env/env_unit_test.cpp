// Unit tests of env/ pieces that need no compiler: shape expressions, signatures, the task
// loader and its errors, glue and job text, static guards, output comparison, feedback text.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "env/compare.hpp"
#include "env/feedback.hpp"
#include "env/glue.hpp"
#include "env/guards.hpp"
#include "env/shape_expr.hpp"
#include "env/signature.hpp"
#include "env/task.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

using namespace leap;
using namespace leap::env;

TEST(ShapeExpr, Arithmetic) {
  std::map<std::string, long long> v{{"M", 3}, {"K", 5}, {"n", 10}, {"k", 3}};
  EXPECT_EQ(*eval_shape("M*K", v), 15);
  EXPECT_EQ(*eval_shape("n - k + 1", v), 8);
  EXPECT_EQ(*eval_shape("(M + 1) * (K - 1) / 2", v), 8);
  EXPECT_EQ(*eval_shape("1", v), 1);
  EXPECT_EQ(*eval_shape("-M + 4", v), 1);
}

TEST(ShapeExpr, Errors) {
  std::map<std::string, long long> v{{"n", 1}};
  auto r = eval_shape("n * m", v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("unknown size parameter 'm'"), std::string::npos);
  EXPECT_FALSE(eval_shape("(n", v).ok());
  EXPECT_FALSE(eval_shape("n / 0", v).ok());
  EXPECT_FALSE(eval_shape("n $ 2", v).ok());
  EXPECT_FALSE(eval_shape("", v).ok());
}

TEST(Signature, ParsesSupportedTypes) {
  auto r = parse_signature(
    R"(extern "C" void solution(const float* a, float *b, const int* __restrict__ c, int* d, int n))");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].c_type(), "const float*");
  EXPECT_EQ((*r)[1].c_type(), "float*");
  EXPECT_EQ((*r)[2].c_type(), "const int*");
  EXPECT_EQ((*r)[3].c_type(), "int*");
  EXPECT_EQ((*r)[4].c_type(), "int");
  EXPECT_EQ((*r)[4].name, "n");
  EXPECT_EQ(render_signature(*r),
            R"(extern "C" void solution(const float* a, float* b, const int* c, int* d, int n))");
}

TEST(Signature, RejectsUnsupported) {
  EXPECT_FALSE(parse_signature(R"(void solution(float* a))").ok());
  EXPECT_FALSE(parse_signature(R"(extern "C" void solution(double* a))").ok());
  EXPECT_FALSE(parse_signature(R"(extern "C" void solution(float a))").ok());
  EXPECT_FALSE(parse_signature(R"(extern "C" void kernel(float* a))").ok());
}

namespace {

struct temp_task {
  std::string dir;
  explicit temp_task(const std::string& toml, const std::string& name = "demo") {
    auto d = make_temp_dir(temp_root(), "leap-task-");
    dir = *d + "/" + name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/task.toml") << toml;
    std::ofstream(dir + "/reference.cu") << "// reference\n";
  }
  ~temp_task() { std::filesystem::remove_all(std::filesystem::path(dir).parent_path()); }
  std::string path() const { return dir + "/task.toml"; }
};

const char* good_task = R"TOML(name = "demo"
level = 1
description = "c = a + b"
signature = 'extern "C" void solution(const float* a, float* c, int n)'
reference = "reference.cu"
atol = 1e-5
rtol = 1e-5
split = "train"
category = "elementwise"

[[args]]
name = "a"
shape = "n"
role = "input"
init = "uniform(-1, 1)"

[[args]]
name = "c"
shape = "n"
role = "output"

[[args]]
name = "n"

[[sizes]]
n = 1000
[[sizes]]
n = 7
)TOML";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return s.replace(p, from.size(), to);
}

} // namespace

TEST(TaskLoader, LoadsAValidTask) {
  temp_task t(good_task);
  auto r = load_task(t.path());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->name, "demo");
  ASSERT_EQ(r->args.size(), 3u);
  EXPECT_EQ(r->args[0].role, arg_role::input);
  EXPECT_EQ(r->args[0].init.kind, init_dist::uniform);
  EXPECT_EQ(r->args[1].role, arg_role::output);
  EXPECT_EQ(r->args[2].role, arg_role::size);
  ASSERT_EQ(r->sizes.size(), 2u);
  EXPECT_EQ(r->elements(0, r->sizes[1]), 7);
  EXPECT_EQ(r->reference_source, "// reference\n");
  EXPECT_TRUE(r->title.empty());
}

// `title` (optional): the name a prompt shows instead of the task's; an empty one is refused.
TEST(TaskLoader, AnOptionalTitleIsTheNameThePromptShows) {
  temp_task t(replace(good_task, "name = \"demo\"", "name = \"demo\"\ntitle = \"scaled_copy\""));
  auto r = load_task(t.path());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->name, "demo");
  EXPECT_EQ(r->title, "scaled_copy");
  temp_task empty(replace(good_task, "name = \"demo\"", "name = \"demo\"\ntitle = \"\""));
  auto e = load_task(empty.path());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message().find("title"), std::string::npos) << e.message();
}

TEST(TaskLoader, ErrorsNameFileLineColumnAndKey) {
  {
    temp_task t(replace(good_task, "level = 1", "level = 1\nlevle = 2"));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":3:1: levle: unknown key; did you mean 'level'?");
  }
  {
    temp_task t(replace(good_task, "role = \"output\"", "role = \"outptu\""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":20:8: [args[1]] role: must be one of \"input\", "
                                      "\"output\", \"inout\" (got \"outptu\")");
  }
  {
    temp_task t(replace(good_task, "uniform(-1, 1)", "uniform(1, -1)"));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":15:8: [args[0]] init: uniform(lo, hi) needs lo < hi");
  }
  {
    temp_task t(replace(good_task, "shape = \"n\"\nrole = \"input\"", "shape = \"m\"\nrole = \"input\""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(t.path() + ":13:9: [args[0]] shape: "), std::string::npos)
      << r.message();
    EXPECT_NE(r.message().find("unknown size parameter 'm'"), std::string::npos) << r.message();
  }
  {
    temp_task t(replace(good_task, "name = \"a\"", "name = \"x\""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":12:8: [args[0]] name: is 'x' but parameter 1 of the "
                                      "signature is 'a'");
  }
  {
    temp_task t(replace(good_task, "[[sizes]]\nn = 7\n", ""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":25:1: sizes: expected at least 2 [[sizes]] tables, got 1 "
                                      "(the size sets the task is checked on)");
  }
  {
    temp_task t(replace(good_task, "level = 1", "level = [1"));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    // toml++ reports where it noticed the unterminated array (the start of line 3).
    EXPECT_EQ(r.message().rfind(t.path() + ":3:1: ", 0), 0u) << r.message();
    EXPECT_NE(r.message().find("array"), std::string::npos) << r.message();
  }
  {
    temp_task t(good_task, "other_name");
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":1:8: name: is 'demo' but the task directory is "
                                      "'other_name'");
  }
}

TEST(TaskLoader, ReportsEveryProblemOfATableInFileOrder) {
  {
    std::string text = replace(good_task, "level = 1", "level = \"1\"");
    text = replace(text, "atol = 1e-5", "atol = -1.0");
    temp_task t(text);
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":2:9: level: expected an integer, got a string (\"1\")\n"
                             + t.path() + ":6:8: atol: must be at least 0 (got -1.0)");
  }
  {
    std::string text = replace(good_task, "init = \"uniform(-1, 1)\"", "colour = 3");
    text = replace(text, "name = \"n\"", "name = \"n\"\nshape = \"n\"");
    temp_task t(text);
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(),
              t.path() + ":11:1: [args[0]] init: missing required key (inputs and inouts need "
                         "one: uniform(lo, hi), normal(mean, std), randint(lo, hi), constant(v), "
                         "zeros or ones)\n"
                + t.path() + ":15:1: [args[0]] colour: unknown key; known keys: name, shape, "
                             "role, init\n"
                + t.path() + ":24:1: [args[2]] shape: unknown key; an int parameter's "
                             "[[args]] table has its name only");
  }
}

TEST(TaskLoader, SplitAndCategoryAreRequiredAndValidated) {
  {
    temp_task t(replace(good_task, "split = \"train\"", "split = \"eval\""));
    auto r = load_task(t.path());
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->split, task_split::eval);
    EXPECT_EQ(r->category, task_category::elementwise);
  }
  {
    temp_task t(replace(good_task, "split = \"train\"\n", ""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), t.path() + ":1:1: split: missing required key (train or eval)");
  }
  {
    temp_task t(replace(good_task, "split = \"train\"", "split = \"test\""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(),
              t.path() + ":8:9: split: must be one of \"train\", \"eval\" (got \"test\")");
  }
  {
    temp_task t(replace(good_task, "category = \"elementwise\"", "category = \"activations\""));
    auto r = load_task(t.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message().rfind(t.path() + ":9:12: ", 0), 0u) << r.message();
    EXPECT_NE(r.message().find("category: must be one of \"activation\", \"elementwise\","),
              std::string::npos) << r.message();
    EXPECT_NE(r.message().find("\"layout\" (got \"activations\")"), std::string::npos)
      << r.message();
  }
}

namespace {

std::map<std::string, task_spec> catalog_of(std::vector<std::pair<std::string, task_split>> v) {
  std::map<std::string, task_spec> c;
  for (auto& [name, split] : v) {
    task_spec t;
    t.name = name;
    t.split = split;
    t.spec_path = "/suite/" + name + "/task.toml";
    c[name] = t;
  }
  return c;
}

} // namespace

TEST(TaskSelection, RolesTakeOnlyTheirSplit) {
  auto c = catalog_of({{"relu", task_split::train}, {"elu", task_split::eval},
                       {"add", task_split::train}, {"mish", task_split::eval}});
  // Empty lists mean the whole split, in name order.
  EXPECT_EQ(*select_tasks(c, "train.tasks", {}, {task_split::train}),
            (std::vector<std::string>{"add", "relu"}));
  EXPECT_EQ(*select_tasks(c, "eval.tasks", {}, {task_split::eval}),
            (std::vector<std::string>{"elu", "mish"}));
  EXPECT_EQ(select_tasks(c, "eval.tasks", {}, {task_split::eval, task_split::train})->size(), 4u);
  // A listed task keeps the list's order.
  EXPECT_EQ(*select_tasks(c, "train.tasks", {"relu", "add"}, {task_split::train}),
            (std::vector<std::string>{"relu", "add"}));
  // An eval task where training draws: an error naming the key, the task and its file.
  auto r = select_tasks(c, "sft.tasks", {"relu", "elu"}, {task_split::train});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("sft.tasks: 'elu' is an eval-split task (held out"), std::string::npos)
    << r.message();
  EXPECT_NE(r.message().find("/suite/elu/task.toml says split = \"eval\""), std::string::npos)
    << r.message();
  // A train task in an eval-only list.
  r = select_tasks(c, "eval.tasks", {"relu"}, {task_split::eval});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("eval.tasks: 'relu' is a train-split task"), std::string::npos);
  // Unknown names list what the role may use; duplicates are refused.
  r = select_tasks(c, "train.tasks", {"gelu"}, {task_split::train});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("train.tasks: unknown task 'gelu' (train-split tasks: add, relu)"),
            std::string::npos) << r.message();
  EXPECT_FALSE(select_tasks(c, "train.tasks", {"add", "add"}, {task_split::train}).ok());
  // A suite without any task of the split.
  auto only_train = catalog_of({{"relu", task_split::train}});
  r = select_tasks(only_train, "eval.tasks", {}, {task_split::eval});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("no eval-split task"), std::string::npos) << r.message();
}

TEST(TaskSuiteHash, NamesTheExactSuite) {
  temp_task a(good_task);
  auto t = load_task(a.path());
  ASSERT_TRUE(t.ok()) << t.message();
  auto u = *t;
  u.name = "demo2";
  const auto h = task_suite_hash(std::vector<task_spec>{*t, u});
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h, task_suite_hash(std::vector<task_spec>{u, *t})) << "order-independent";
  auto edited = u;
  edited.spec_source += "\n# a comment";
  EXPECT_NE(h, task_suite_hash(std::vector<task_spec>{*t, edited}));
  auto ref_edited = u;
  ref_edited.reference_source += " ";
  EXPECT_NE(h, task_suite_hash(std::vector<task_spec>{*t, ref_edited}));
  EXPECT_NE(h, task_suite_hash(std::vector<task_spec>{*t}));
}

TEST(TaskLoader, BundledSuiteLoads) {
  auto suite = load_task_suite(std::string(LEAP_SOURCE_DIR) + "/tasks");
  ASSERT_TRUE(suite.ok()) << suite.message();
  EXPECT_GE(suite->size(), 16u);
  std::map<std::string, std::string> required = {
    {"vector_add", R"(extern "C" void solution(const float* a, const float* b, float* c, int n))"},
    {"relu", R"(extern "C" void solution(const float* x, float* y, int n))"},
    {"softmax_rows", R"(extern "C" void solution(const float* x, float* y, int rows, int cols))"},
    {"matmul", R"(extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K))"},
    {"sum_reduce", R"(extern "C" void solution(const float* x, float* out, int n))"},
    {"layernorm_rows", R"(extern "C" void solution(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols))"},
    {"matmul_bias_relu", R"(extern "C" void solution(const float* A, const float* B, const float* bias, float* C, int M, int N, int K))"},
  };
  std::set<int> levels;
  for (auto& t : *suite) {
    levels.insert(t.level);
    std::vector<param> ps;
    for (auto& a : t.args)
      ps.push_back(a.p);
    if (required.count(t.name)) {
      EXPECT_EQ(render_signature(ps), required[t.name]) << t.name;
      required.erase(t.name);
    }
    // At least one size set that is not a multiple of 32 in some dimension.
    bool odd = false;
    for (auto& s : t.sizes)
      for (auto& [k, v] : s)
        odd = odd || v % 32 != 0;
    EXPECT_TRUE(odd) << t.name << " has only block-size-friendly sizes";
  }
  EXPECT_TRUE(required.empty());
  EXPECT_EQ(levels, (std::set<int>{1, 2, 3}));
}

// The bundled suite: at least 60 tasks; at least 15 held out, each a different operator of a
// category that also has train tasks, and the categories of KernelBench's level 1/2 all present.
TEST(TaskLoader, BundledSuiteHasAHeldOutEvalSplit) {
  auto suite = load_task_suite(std::string(LEAP_SOURCE_DIR) + "/tasks");
  ASSERT_TRUE(suite.ok()) << suite.message();
  EXPECT_GE(suite->size(), 60u);
  std::map<task_category, int> train, eval;
  for (auto& t : *suite)
    ++(t.split == task_split::train ? train : eval)[t.category];
  EXPECT_GE(tasks_of_split(*suite, task_split::eval).size(), 15u);
  for (auto& [c, n] : eval)
    EXPECT_GT(train[c], 0) << to_string(c) << " has eval tasks but no train task";
  for (auto c : all_task_categories())
    EXPECT_GT(train[c], 0) << to_string(c) << " has no train task";
}

TEST(Glue, InvokesSolutionWithCasts) {
  temp_task t(good_task);
  auto task = load_task(t.path());
  ASSERT_TRUE(task.ok());
  auto g = make_glue_source(*task);
  EXPECT_NE(g.find(R"(extern "C" void solution(const float* a, float* c, int n);)"), std::string::npos);
  EXPECT_NE(g.find("static_cast<const float*>(p[0]), static_cast<float*>(p[1]), static_cast<int>(v[2])"),
            std::string::npos) << g;
  auto job = make_job_text(*task, 42, 3, false, false, 1, 2, 0);
  EXPECT_NE(job.find("seed 42\n"), std::string::npos);
  EXPECT_NE(job.find("trials 3\n"), std::string::npos);
  EXPECT_NE(job.find("size 1000 1000 1000\n"), std::string::npos) << job;
  EXPECT_NE(job.find("size 7 7 7\n"), std::string::npos);
}

TEST(Guards, BlanksCommentsAndStrings) {
  auto b = blank_comments_and_strings("a // fopen(\nb /* system( */ \"exit(\" R\"x(popen()x\" c");
  EXPECT_EQ(b.find("fopen"), std::string::npos);
  EXPECT_EQ(b.find("system"), std::string::npos);
  EXPECT_EQ(b.find("exit"), std::string::npos);
  EXPECT_EQ(b.find("popen"), std::string::npos);
  EXPECT_NE(b.find('c'), std::string::npos);
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 1);
}

TEST(Guards, RejectsForbiddenThingsAndAcceptsNormalCode) {
  const std::string ok = "#include <cuda_runtime.h>\n__global__ void k(float* x){}\n"
                         "// fopen( in a comment is fine\n"
                         "extern \"C\" void solution(float* x, int n) { k<<<1,1>>>(x); }\n";
  EXPECT_TRUE(static_check(ok, {}).ok) << static_check(ok, {}).reason;
  auto r = static_check("#include <cublas_v2.h>\nextern \"C\" void solution(){}", {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("cublas"), std::string::npos);
  EXPECT_EQ(r.line, 1);
  EXPECT_TRUE(static_check("#include <cublas_v2.h>\nextern \"C\" void solution(){}", {"cublas"}).ok);
  r = static_check("#include <thrust/sort.h>\nextern \"C\" void solution(){}", {});
  EXPECT_FALSE(r.ok);
  r = static_check("extern \"C\" void solution(){\n  system(\"rm -rf /\");\n}", {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.line, 2);
  EXPECT_NE(r.reason.find("'system'"), std::string::npos);
  r = static_check("extern \"C\" void solution(){ FILE* f = fopen(\"x\", \"w\"); }", {});
  EXPECT_FALSE(r.ok);
  r = static_check("__global__ void k(){}\n", {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("no entry point"), std::string::npos);
  r = static_check("#include <fstream>\nextern \"C\" void solution(){}", {});
  EXPECT_FALSE(r.ok);
}

// Work that would outlive solution() (host threads, std::async) and persisting-L2 windows, which
// keep one timed call's data in the cache for the next, are refused with the line; the same words
// as a member call or inside a comment are not.
TEST(Guards, RejectsAsyncHostWorkAndPersistingL2Windows) {
  const std::string tail = "\nextern \"C\" void solution(float* x) {}\n";
  for (const std::string bad :
       {"auto f = std::async(std::launch::async, []{});", "std::jthread t([]{});",
        "#include <future>", "#include <pthread.h>", "void g() { pthread_t t; pthread_create(&t, 0, 0, 0); }",
        "void g() { clone(0, 0, 0, 0); }",
        "void g(cudaStream_t s) { cudaStreamAttrValue v; v.accessPolicyWindow.num_bytes = 1; }",
        "void g() { cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20); }",
        "void g() { cudaCtxResetPersistingL2Cache(); }"}) {
    auto r = static_check("// header\n" + bad + tail, {});
    EXPECT_FALSE(r.ok) << bad;
    EXPECT_EQ(r.line, 2) << bad << ": " << r.reason;
  }
  auto l2 = static_check("void g() { cudaCtxResetPersistingL2Cache(); }" + tail, {});
  EXPECT_NE(l2.reason.find("persisting-L2"), std::string::npos) << l2.reason;
  for (const std::string fine : {"// std::async in a comment", "template <class T> void g(T a) { a.clone(); }",
                                 "__device__ float async_copy(float x) { return x; }"})
    EXPECT_TRUE(static_check(fine + tail, {}).ok) << fine << ": " << static_check(fine + tail, {}).reason;
}

TEST(Guards, ExitAndAbortOnlyInTheBranchOfAFailedCudaCall) {
  const std::string entry = "extern \"C\" void solution(float* x) { k<<<1, 1>>>(x); }\n";
  // The usual helpers: a macro, a function testing the status, a bare `if (e)` in a helper
  // that takes a cudaError_t, std::abort.
  const std::string macro =
      "#define CUDA_CHECK(call) do { cudaError_t e_ = (call); \\\n"
      "  if (e_ != cudaSuccess) { fprintf(stderr, \"%s\\n\", cudaGetErrorString(e_)); exit(1); } } while (0)\n"
      "__global__ void k(float* x) {}\n"
      "extern \"C\" void solution(float* x) { k<<<1, 1>>>(x); CUDA_CHECK(cudaGetLastError()); }\n";
  EXPECT_TRUE(static_check(macro, {}).ok) << static_check(macro, {}).reason;
  const std::string helper =
      "__global__ void k(float* x) {}\n"
      "static void cuda_check(cudaError_t err, const char* what) {\n"
      "  if (err != cudaSuccess) {\n    fprintf(stderr, \"%s failed\\n\", what);\n    std::exit(EXIT_FAILURE);\n  }\n}\n"
      "static void check2(cudaError_t e) { if (e) abort(); }\n" + entry;
  EXPECT_TRUE(static_check(helper, {}).ok) << static_check(helper, {}).reason;
  // exit() anywhere else stays rejected, with the reason saying where it is allowed.
  auto r = static_check("__global__ void k(float* x) {}\nextern \"C\" void solution(float* x) {\n  exit(0);\n}\n", {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.line, 3);
  EXPECT_NE(r.reason.find("a failed CUDA call"), std::string::npos) << r.reason;
  r = static_check("static void f(int n) { if (n > 3) exit(2); }\n" + entry, {});
  EXPECT_FALSE(r.ok);
  // Other calls are rejected even after an allowed exit, and after a member call (x.open()).
  r = static_check("static void c(cudaError_t e) { if (e != cudaSuccess) exit(1); }\n"
                   "static void g(reader& v) {\n  v.open();\n  system(\"x\");\n}\n" + entry, {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("'system'"), std::string::npos) << r.reason;
  // _exit is never allowed.
  r = static_check("static void c(cudaError_t e) { if (e != cudaSuccess) _exit(1); }\n" + entry, {});
  EXPECT_FALSE(r.ok);
}

namespace {
std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}
} // namespace

TEST(Compare, ToleranceNanAndFirstMismatch) {
  temp_task t(replace(good_task, "n = 1000", "n = 2"));
  auto task = load_task(t.path());
  ASSERT_TRUE(task.ok());
  // Layout: size set 0 (n=2) trial 0, size set 1 (n=7) trial 0; only output c.
  auto ref = floats({1, 2, 0, 0, 0, 0, 0, 0, 1});
  auto same = compare_outputs(*task, 1, ref, ref);
  EXPECT_TRUE(same.ok);
  EXPECT_EQ(same.trials_passed, 2);
  auto close = floats({1 + 5e-6f, 2, 0, 0, 0, 0, 0, 0, 1});
  EXPECT_TRUE(compare_outputs(*task, 1, close, ref).ok);
  auto off = floats({1, 2, 0, 0, 0, 3.5f, 0, 0, std::nanf("")});
  auto c = compare_outputs(*task, 1, off, ref);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.size_set, 1);
  EXPECT_EQ(c.first_index, 3);
  EXPECT_EQ(c.output, "c");
  EXPECT_FLOAT_EQ(c.expected, 0);
  EXPECT_FLOAT_EQ(c.actual, 3.5f);
  EXPECT_EQ(c.mismatches, 2); // 3.5 and the NaN
  EXPECT_EQ(c.trials_passed, 1);
  EXPECT_TRUE(std::isinf(c.max_abs));
  EXPECT_TRUE(compare_outputs(*task, 1, floats({1}), ref).malformed.has_value());
}

// Outputs read from files a piece at a time compare exactly as the same bytes in memory: a
// buffer of several pieces (n = 200,000, then n = 7), a mismatch in the third piece and one at
// the last element; a prefix limit; a file shorter than the task's outputs; a file cut short
// after it was opened (it ends early, never crashes); a link and a FIFO are refused, not
// followed and not waited on.
TEST(Compare, OutputsReadFromFilesInPiecesCompareLikeBuffers) {
  temp_task t(replace(good_task, "n = 1000", "n = 200000"));
  auto task = load_task(t.path());
  ASSERT_TRUE(task.ok());
  const long long total = 200000 + 7;
  ASSERT_GT(total * 4, static_cast<long long>(2 * output_source::piece_bytes));
  std::vector<float> r(total), g(total);
  for (long long k = 0; k < total; ++k)
    r[k] = g[k] = std::sin(0.001f * static_cast<float>(k));
  g[150001] += 1.0f;     // the third 64k-element piece
  g[total - 1] = std::nanf("");
  auto bytes = [](const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  };
  auto dir = *make_temp_dir(temp_root(), "leap-compare-");
  ASSERT_TRUE(write_file_atomic(dir + "/ref.bin", bytes(r)));
  ASSERT_TRUE(write_file_atomic(dir + "/cand.bin", bytes(g)));
  auto mem = compare_outputs(*task, 1, bytes(g), bytes(r));
  auto rs = output_source::open(dir + "/ref.bin");
  auto cs = output_source::open(dir + "/cand.bin");
  ASSERT_TRUE(rs.ok()) << rs.message();
  ASSERT_TRUE(cs.ok()) << cs.message();
  auto fil = compare_outputs(*task, 1, *cs, *rs);
  EXPECT_FALSE(mem.ok);
  EXPECT_FALSE(fil.malformed.has_value()) << *fil.malformed;
  EXPECT_EQ(fil.ok, mem.ok);
  EXPECT_EQ(fil.first_index, 150001);
  EXPECT_EQ(fil.first_index, mem.first_index);
  EXPECT_EQ(fil.size_set, 0);
  EXPECT_EQ(fil.mismatches, mem.mismatches);
  EXPECT_EQ(fil.trials_passed, 0);
  EXPECT_EQ(fil.trials_passed, mem.trials_passed);
  EXPECT_EQ(fil.max_abs, mem.max_abs);
  EXPECT_FLOAT_EQ(static_cast<float>(fil.actual), g[150001]);

  // The first size set alone, read as a prefix of the files: equal there.
  task_spec first = *task; // as the executor checks timed and repeated calls
  first.sizes.resize(1);
  std::vector<float> g2 = r;
  ASSERT_TRUE(write_file_atomic(dir + "/cand2.bin", bytes(g2)));
  auto rp = output_source::open(dir + "/ref.bin", 200000 * 4);
  auto cp = output_source::open(dir + "/cand2.bin", 200000 * 4);
  ASSERT_TRUE(rp.ok() && cp.ok());
  EXPECT_TRUE(compare_outputs(first, 1, *cp, *rp).ok);

  // Shorter than the task's outputs: malformed, naming the sizes.
  ASSERT_TRUE(write_file_atomic(dir + "/short.bin", bytes(r).substr(0, 4000)));
  auto ss = output_source::open(dir + "/short.bin");
  auto rs2 = output_source::open(dir + "/ref.bin");
  auto sh = compare_outputs(*task, 1, *ss, *rs2);
  ASSERT_TRUE(sh.malformed.has_value());
  EXPECT_NE(sh.malformed->find("candidate outputs have 4000 bytes, expected 800028"), std::string::npos)
    << *sh.malformed;

  // Cut short after it was opened (its size was read then): the source ends early.
  auto cut = output_source::open(dir + "/cand2.bin");
  auto rs3 = output_source::open(dir + "/ref.bin");
  ASSERT_TRUE(cut.ok() && rs3.ok());
  std::filesystem::resize_file(dir + "/cand2.bin", 300000);
  auto ct = compare_outputs(*task, 1, *cut, *rs3);
  ASSERT_TRUE(ct.malformed.has_value());
  EXPECT_NE(ct.malformed->find("candidate outputs ended early"), std::string::npos) << *ct.malformed;
  EXPECT_FALSE(ct.ok);

  // A link and a FIFO where the outputs belong.
  std::filesystem::create_symlink(dir + "/ref.bin", dir + "/link.bin");
  auto ln = output_source::open(dir + "/link.bin");
  EXPECT_FALSE(ln.ok());
  ASSERT_EQ(::mkfifo((dir + "/fifo.bin").c_str(), 0600), 0);
  auto ff = output_source::open(dir + "/fifo.bin");
  ASSERT_FALSE(ff.ok());
  EXPECT_NE(ff.message().find("not a regular file"), std::string::npos) << ff.message();
  EXPECT_FALSE(output_source::open(dir + "/missing.bin").ok());
  std::filesystem::remove_all(dir);
}

// The degenerate answers a tolerance must refuse, on hand-made inputs and reference outputs of
// the demo task (c = f(a), n = 2 then n = 3, one trial): each is found when the tolerance lets it
// pass, and none when the reference differs from all of them.
TEST(Compare, DegenerateAnswersThatATolerancePasses) {
  temp_task t(replace(replace(good_task, "n = 1000", "n = 2"), "n = 7", "n = 3"));
  auto task = load_task(t.path());
  ASSERT_TRUE(task.ok());
  const auto inputs = floats({0.5f, -0.25f, 0.75f, 0.125f, -1});
  // c = 2a + 1: nothing degenerate passes a tight tolerance.
  EXPECT_FALSE(degenerate_answer_passes(*task, 1, inputs, floats({2, 0.5f, 2.5f, 1.25f, -1})).has_value());
  // c = a: the copy passes (the identity).
  auto copy = degenerate_answer_passes(*task, 1, inputs, inputs);
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(*copy, "output 'c' a copy of input 'a'");
  // Tiny outputs under a loose atol: all zeros pass.
  task->atol = 0.01;
  auto zeros = degenerate_answer_passes(*task, 1, inputs, floats({0.001f, -0.002f, 0, 0.003f, 0}));
  ASSERT_TRUE(zeros.has_value());
  EXPECT_EQ(*zeros, "every output all zeros");
  // Short inputs are reported, not taken as a pass or a fail.
  auto short_in = degenerate_answer_passes(*task, 1, floats({1}), inputs);
  ASSERT_TRUE(short_in.has_value());
  EXPECT_NE(short_in->find("shorter"), std::string::npos);
}

TEST(Feedback, CleansDiagnosticsAndDescribesVerdicts) {
  std::string raw = "/tmp/leap-x/build-1/solution.cu(3): error: identifier \"q\" is undefined\n"
                    "      q = 1;\n      ^\n\n1 error detected in the compilation of "
                    "\"/tmp/leap-x/build-1/solution.cu\".\n";
  auto d = clean_diagnostics(raw, "/tmp/leap-x/build-1", 12);
  EXPECT_EQ(d.find("/tmp"), std::string::npos) << d;
  EXPECT_EQ(d.find("error detected"), std::string::npos) << d;
  EXPECT_EQ(d.rfind("solution.cu(3): error: identifier \"q\" is undefined", 0), 0u) << d;
  EXPECT_EQ(leap::split_lines(clean_diagnostics(raw, "", 1)).size(), 2u);

  temp_task t(good_task);
  auto task = load_task(t.path());
  ASSERT_TRUE(task.ok());
  verdict v;
  v.st = status::wrong_answer;
  v.mismatch_output = "c";
  v.mismatch_size_set = 1;
  v.mismatch_index = 3;
  v.expected = 0.5;
  v.actual = 3.6;
  v.mismatches = 2;
  v.max_abs_error = 3.1;
  auto f = make_feedback(v, *task);
  EXPECT_NE(f.find("wrong result for output c (size set n=7)"), std::string::npos) << f;
  EXPECT_NE(f.find("index 3 (expected 0.5, got 3.6)"), std::string::npos) << f;
  EXPECT_NE(f.find("2 of 7 elements"), std::string::npos) << f;
  v.st = status::correct;
  v.backend = backend::cpu;
  v.trials_run = 4;
  EXPECT_NE(make_feedback(v, *task).find("correctness only"), std::string::npos);
}
