// Tests of leap::config: defaults, TOML loading and its error messages, --set overrides, TOML
// round trip, docs/config.md sync and the shipped configs/*.toml.
#include "runtime/config/config.hpp"
#include "runtime/config/schema.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <toml++/toml.h>

namespace leap::config {

// Readable failure output for EXPECT_EQ on whole configs.
void PrintTo(const leap_config& c, std::ostream* os) { *os << "\n" << to_toml(c); }

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Loads TOML text expected to fail and returns the error message.
std::string load_error(const std::string& text) {
  auto r = load_string(text, "x.toml");
  EXPECT_FALSE(r.ok()) << "expected an error for:\n" << text;
  return r.ok() ? std::string() : r.message();
}

std::string set_error(const std::string& assignment) {
  leap_config cfg = defaults();
  auto r = apply_override(cfg, assignment);
  EXPECT_FALSE(r.ok()) << "expected an error for --set " << assignment;
  EXPECT_EQ(cfg, defaults()) << "a failed --set must leave the config unchanged";
  return r.ok() ? std::string() : r.message();
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// ---------------------------------------------------------------------------------------------
// Defaults and registry.

TEST(Config, DefaultsMatchTheSpecification) {
  leap_config c = defaults();
  EXPECT_EQ(c.environment.backend, backend_kind::auto_select);
  EXPECT_EQ(c.environment.tasks_dir, "");
  EXPECT_EQ(c.environment.cache_dir, "");
  EXPECT_EQ(c.environment.work_dir, "");
  EXPECT_EQ(c.compiler.workers, 2);
  EXPECT_EQ(c.compiler.nvcc, "");
  EXPECT_EQ(c.compiler.arch, "sm_90");
  EXPECT_EQ(c.compiler.nvcc_flags, (std::vector<std::string>{"-O3", "-std=c++17"}));
  EXPECT_EQ(c.compiler.host_cxx, "g++");
  EXPECT_EQ(c.compiler.emu_flags, (std::vector<std::string>{"-O2"}));
  EXPECT_DOUBLE_EQ(c.compiler.timeout_seconds, 120.0);
  EXPECT_EQ(c.compiler.max_diagnostic_lines, 12);
  EXPECT_EQ(c.executor.workers, 2);
  EXPECT_DOUBLE_EQ(c.executor.timeout_seconds, 30.0);
  EXPECT_EQ(c.executor.memory_limit_mb, 4096);
  EXPECT_EQ(c.executor.trials, 2);
  EXPECT_EQ(c.executor.seed, 0u);
  EXPECT_EQ(c.executor.output_limit_kb, 64);
  EXPECT_EQ(c.emulation.threads, 2);
  EXPECT_EQ(c.emulation.fiber_stack_kb, 128);
  EXPECT_EQ(c.cuda.device, 0);
  EXPECT_EQ(c.cuda.warmup, 3);
  EXPECT_EQ(c.cuda.timing_runs, 10);
  EXPECT_EQ(c.cuda.l2_flush_mb, 128);
}

TEST(Config, RegistryListsEverySectionAndKeyInOrder) {
  std::vector<std::string> got;
  for (const auto& s : schema().sections())
    for (const auto& k : s.keys) got.push_back(k.full_name());
  std::vector<std::string> want = {
      "environment.backend", "environment.tasks_dir", "environment.cache_dir",
      "environment.work_dir", "environment.cache_max_mb", "environment.generated_tasks",
      "environment.generated_eval_tasks", "environment.generated_seed", "compiler.workers", "compiler.nvcc", "compiler.arch",
      "compiler.nvcc_flags", "compiler.host_cxx", "compiler.emu_flags",
      "compiler.timeout_seconds", "compiler.max_diagnostic_lines", "compiler.retries",
      "executor.workers",
      "executor.timeout_seconds", "executor.memory_limit_mb", "executor.trials", "executor.seed",
      "executor.output_limit_kb", "executor.sandbox", "executor.check_repeat", "executor.retries",
      "emulation.threads", "emulation.fiber_stack_kb", "cuda.device", "cuda.warmup",
      "cuda.timing_runs", "cuda.l2_flush_mb", "cuda.max_plausible_speedup",
      "policy.vocab_size", "policy.d_model", "policy.n_layers", "policy.n_heads",
      "policy.n_kv_heads", "policy.d_ff", "policy.max_seq_len", "policy.rope_theta",
      "policy.tie_embeddings", "policy.chat_format", "sft.minutes", "sft.max_steps", "sft.batch_sequences", "sft.lr",
      "sft.min_lr_ratio", "sft.warmup_steps", "sft.weight_decay", "sft.grad_clip", "sft.seed",
      "sft.corpus_seed", "sft.bugs_per_kind", "sft.solutions_per_task", "sft.bug_kinds", "sft.repair_format", "sft.repair_weight", "sft.alt_solution_weight",
      "sft.self_repair_steps", "sft.self_repair_samples", "sft.self_repair_weight", "sft.self_repair_tasks", "sft.tasks", "sft.bundled_tasks", "sft.bundled_weight", "sft.generated_tasks", "sft.generated_families", "sft.generated_first", "sft.generated_paraphrases", "sft.generated_written", "sft.generated_notation", "sft.generated_family_weights", "sft.generated_bugs_per_kind", "sft.generated_bug_tasks", "sft.generated_labels", "sft.init_checkpoint",
      "eval.group_size", "eval.max_turns",
      "eval.temperature", "eval.top_p", "eval.max_new_tokens", "eval.seed", "eval.split", "eval.tasks",
      "train.steps", "train.max_minutes", "train.max_compiles", "train.max_lost_steps", "train.batch_groups", "train.group_size", "train.max_turns", "train.mode",
      "train.max_staleness", "train.batch_order", "train.generators", "train.dcp", "train.dcp_t_min",
      "train.dcp_t_max", "train.dcp_fractional", "train.cancel_pruned_turn1", "train.estimator",
      "train.gamma", "train.tie_keys",
      "train.speedup_margin", "train.tokens_margin", "train.temperature", "train.top_p",
      "train.max_new_tokens", "train.seed", "train.checkpoint_every", "train.eval_every",
      "train.eval_tasks", "train.eval_seed", "train.warm_start",
      "train.warm_start_sha256", "train.tasks", "learner.lr", "learner.weight_decay", "learner.grad_clip",
      "learner.clip_low", "learner.clip_high", "learner.kl_coef", "learner.aggregation",
      "learner.micro_batch", "learner.mini_batches", "learner.epochs", "node.listen",
      "node.roles", "node.checkpoint", "node.join", "cluster.nodes", "cluster.listen", "cluster.local_roles", "cluster.queue_per_worker",
      "cluster.heartbeat_seconds", "cluster.heartbeat_misses", "cluster.node_wait_seconds",
      "cluster.tls_cert", "cluster.tls_key", "cluster.tls_ca", "cluster.tls_peer_names",
      "cluster.insecure",
      "serve.listen", "serve.threads", "serve.max_connections", "serve.max_queue",
      "serve.max_groups", "serve.max_group_size", "serve.max_body_kb", "serve.max_header_kb",
      "serve.read_timeout_seconds", "serve.idle_timeout_seconds", "serve.request_timeout_seconds",
      "serve.group_ttl_seconds", "serve.drain_seconds", "serve.token_env", "serve.tls_cert",
      "serve.tls_key", "generation.source", "openai.url", "openai.model", "openai.api_key_env",
      "openai.tls_ca", "openai.max_concurrency", "openai.timeout_seconds"};
  EXPECT_EQ(got, want);
  for (const auto& s : schema().sections()) {
    EXPECT_FALSE(s.doc.empty()) << s.name;
    for (const auto& k : s.keys) {
      EXPECT_FALSE(k.doc.empty()) << k.full_name();
      EXPECT_FALSE(toml_schema::check_value(k, k.default_value)) << k.full_name()
                                                                  << " default invalid";
      EXPECT_EQ(k.get(defaults()), k.default_value) << k.full_name();
    }
  }
}

TEST(Config, EqualityComparesEveryKey) {
  leap_config a = defaults(), b = defaults();
  EXPECT_EQ(a, b);
  b.cuda.l2_flush_mb = 0;
  EXPECT_NE(a, b);
  b = defaults();
  b.compiler.emu_flags.push_back("-g");
  EXPECT_NE(a, b);
}

TEST(Config, GetValueToml) {
  leap_config c = defaults();
  EXPECT_EQ(*get_value_toml(c, "compiler.workers"), "2");
  EXPECT_EQ(*get_value_toml(c, "compiler.arch"), "\"sm_90\"");
  EXPECT_EQ(*get_value_toml(c, "compiler.nvcc_flags"), "[\"-O3\", \"-std=c++17\"]");
  EXPECT_EQ(*get_value_toml(c, "executor.timeout_seconds"), "30.0");
  EXPECT_EQ(*get_value_toml(c, "environment.backend"), "\"auto\"");
  EXPECT_FALSE(get_value_toml(c, "compiler.nope").ok());
  EXPECT_FALSE(get_value_toml(c, "workers").ok());
}

// ---------------------------------------------------------------------------------------------
// Loading.

TEST(ConfigLoad, EmptyTextGivesDefaults) {
  auto r = load_string("", "x.toml");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(*r, defaults());
}

TEST(ConfigLoad, SetsGivenKeysAndKeepsTheRest) {
  auto r = load_string(R"(
# comment
[environment]
backend = "cpu"
tasks_dir = "/data/tasks"

[compiler]
workers = 4
nvcc_flags = ["-O2", "-lineinfo"]
timeout_seconds = 60      # an integer is accepted for a float key

[executor]
seed = 1234
timeout_seconds = 2.5

[cuda]
l2_flush_mb = 0
)",
                       "x.toml");
  ASSERT_TRUE(r.ok()) << r.message();
  leap_config want = defaults();
  want.environment.backend = backend_kind::cpu;
  want.environment.tasks_dir = "/data/tasks";
  want.compiler.workers = 4;
  want.compiler.nvcc_flags = {"-O2", "-lineinfo"};
  want.compiler.timeout_seconds = 60.0;
  want.executor.seed = 1234;
  want.executor.timeout_seconds = 2.5;
  want.cuda.l2_flush_mb = 0;
  EXPECT_EQ(*r, want);
}

TEST(ConfigLoad, DottedKeysAndInlineTablesWork) {
  auto r = load_string("compiler.workers = 3\nexecutor = { trials = 5 }\n", "x.toml");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->compiler.workers, 3);
  EXPECT_EQ(r->executor.trials, 5);
}

TEST(ConfigLoadErrors, IntegerKeyGivenString) {
  EXPECT_EQ(load_error("[compiler]\nworkers = \"abc\"\n"),
            "x.toml:2:11: [compiler] workers: expected an integer, got a string (\"abc\")");
}

TEST(ConfigLoadErrors, IntegerKeyGivenFloat) {
  EXPECT_EQ(load_error("[executor]\ntrials = 2.5\n"),
            "x.toml:2:10: [executor] trials: expected an integer, got a float (2.5)");
}

TEST(ConfigLoadErrors, IntegerKeyGivenBoolean) {
  EXPECT_EQ(load_error("[cuda]\n  warmup = true\n"),
            "x.toml:2:12: [cuda] warmup: expected an integer, got a boolean (true)");
}

TEST(ConfigLoadErrors, FloatKeyGivenString) {
  EXPECT_EQ(load_error("[compiler]\ntimeout_seconds = \"fast\"\n"),
            "x.toml:2:19: [compiler] timeout_seconds: expected a number, got a string (\"fast\")");
}

TEST(ConfigLoadErrors, StringKeyGivenInteger) {
  EXPECT_EQ(load_error("[compiler]\narch = 90\n"),
            "x.toml:2:8: [compiler] arch: expected a string, got an integer (90)");
}

TEST(ConfigLoadErrors, EnumKeyGivenBoolean) {
  EXPECT_EQ(load_error("[environment]\nbackend = false\n"),
            "x.toml:2:11: [environment] backend: expected a string, got a boolean (false)");
}

TEST(ConfigLoadErrors, StringListGivenString) {
  EXPECT_EQ(load_error("[compiler]\nnvcc_flags = \"-O3\"\n"),
            "x.toml:2:14: [compiler] nvcc_flags: expected an array of strings such as "
            "[\"-O3\", \"-g\"], got a string (\"-O3\")");
}

TEST(ConfigLoadErrors, StringListElementNotAString) {
  // The position is the offending element's.
  EXPECT_EQ(load_error("[compiler]\nemu_flags = [\"-O2\", 3]\n"),
            "x.toml:2:21: [compiler] emu_flags: element [1]: expected a string, got an integer "
            "(3)");
}

TEST(ConfigLoadErrors, StringKeyGivenTableOrDate) {
  EXPECT_EQ(load_error("[compiler]\nnvcc = { path = \"x\" }\n"),
            "x.toml:2:8: [compiler] nvcc: expected a string, got a table");
  EXPECT_EQ(load_error("[compiler]\nhost_cxx = 2024-01-01\n"),
            "x.toml:2:12: [compiler] host_cxx: expected a string, got a date");
}

TEST(ConfigLoadErrors, SectionThatIsNotATable) {
  EXPECT_EQ(load_error("compiler = 3\n"),
            "x.toml:1:12: compiler: expected a table ([compiler]), got an integer (3)");
  EXPECT_EQ(load_error("[[compiler]]\nworkers = 2\n"),
            "x.toml:1:1: compiler: expected a table ([compiler]), got an array");
}

TEST(ConfigLoadErrors, UnknownKeySuggestsClosest) {
  EXPECT_EQ(load_error("[compiler]\nworkers = 2\nwrokers = 3\n"),
            "x.toml:3:1: [compiler] wrokers: unknown key; did you mean 'workers'?");
}

TEST(ConfigLoadErrors, UnknownKeyWithoutSuggestion) {
  EXPECT_EQ(load_error("[cuda]\n  zzz = 1\n"),
            "x.toml:2:3: [cuda] zzz: unknown key; known keys: device, warmup, timing_runs, "
            "l2_flush_mb, max_plausible_speedup");
}

TEST(ConfigLoadErrors, KeyOfAnotherSectionIsNamed) {
  EXPECT_EQ(load_error("[compiler]\nseed = 1\n"),
            "x.toml:2:1: [compiler] seed: unknown key; 'seed' is a key of [executor], [sft], "
            "[eval], [train]");
}

TEST(ConfigLoadErrors, UnknownSection) {
  EXPECT_EQ(load_error("[compilr]\nworkers = 2\n"),
            "x.toml:1:2: [compilr]: unknown section; did you mean [compiler]?");
  EXPECT_EQ(load_error("[nonsense]\nlr = 1e-5\n"),
            "x.toml:1:2: [nonsense]: unknown section; known sections: environment, compiler, "
            "executor, emulation, cuda, policy, sft, eval, train, learner, node, cluster, serve, "
            "generation, openai");
}

TEST(ConfigLoadErrors, KeyOutsideAnySection) {
  EXPECT_EQ(load_error("backend = \"cpu\"\n"),
            "x.toml:1:1: backend: unknown key; keys go inside a section: put it under "
            "[environment]");
  EXPECT_EQ(load_error("workers = 2\n"),
            "x.toml:1:1: workers: unknown key; keys go inside a section: put it under [compiler] "
            "or [executor]");
  EXPECT_EQ(load_error("verbose = true\n"),
            "x.toml:1:1: verbose: unknown key; known sections: environment, compiler, executor, "
            "emulation, cuda, policy, sft, eval, train, learner, node, cluster, serve, "
            "generation, openai");
}

TEST(ConfigLoadErrors, OutOfRange) {
  EXPECT_EQ(load_error("[compiler]\nworkers = 0\n"),
            "x.toml:2:11: [compiler] workers: must be at least 1 (got 0)");
  EXPECT_EQ(load_error("[compiler]\ntimeout_seconds = 0.0\n"),
            "x.toml:2:19: [compiler] timeout_seconds: must be greater than 0 (got 0.0)");
  EXPECT_EQ(load_error("[executor]\nmemory_limit_mb = 63\n"),
            "x.toml:2:19: [executor] memory_limit_mb: must be at least 64 (got 63)");
  EXPECT_EQ(load_error("[emulation]\nfiber_stack_kb = 100000\n"),
            "x.toml:2:18: [emulation] fiber_stack_kb: must be between 16 and 65536 (got "
            "100000)");
  EXPECT_EQ(load_error("[executor]\nseed = -1\n"),
            "x.toml:2:8: [executor] seed: must be at least 0 (got -1)");
  EXPECT_EQ(load_error("[cuda]\ntiming_runs = 10000000000\n"),
            "x.toml:2:15: [cuda] timing_runs: must be between -2147483648 and "
            "2147483647 (got 10000000000)");
  EXPECT_EQ(load_error("[executor]\ntimeout_seconds = inf\n"),
            "x.toml:2:19: [executor] timeout_seconds: must be a finite number (got inf)");
  EXPECT_EQ(load_error("[compiler]\narch = \"\"\n"),
            "x.toml:2:8: [compiler] arch: must not be empty");
}

TEST(ConfigLoadErrors, EnumValueNotAllowed) {
  EXPECT_EQ(load_error("[environment]\nbackend = \"gpu\"\n"),
            "x.toml:2:11: [environment] backend: must be one of \"auto\", \"cpu\", \"cuda\" "
            "(got \"gpu\")");
  // No "did you mean" here: the full list is short, and "gpu" -> "cpu" would mislead.
  EXPECT_EQ(load_error("[environment]\nbackend = \"CUDA\"\n"),
            "x.toml:2:11: [environment] backend: must be one of \"auto\", \"cpu\", \"cuda\" "
            "(got \"CUDA\")");
}

TEST(ConfigLoadErrors, AllErrorsReportedInFileOrder) {
  EXPECT_EQ(load_error("[executor]\ntrials = 0\n[compiler]\nworkers = \"x\"\n[cuda]\nwarmup = -1\n"),
            "x.toml:2:10: [executor] trials: must be at least 1 (got 0)\n"
            "x.toml:4:11: [compiler] workers: expected an integer, got a string (\"x\")\n"
            "x.toml:6:10: [cuda] warmup: must be at least 0 (got -1)");
}

TEST(ConfigLoadErrors, TheExamplesOfDocsConfigMd) {
  EXPECT_EQ(load_error("[train]\nsteps = 2\nstpes = 3\ngroup_size = 1\n"),
            "x.toml:3:1: [train] stpes: unknown key; did you mean 'steps'?\n"
            "x.toml:4:14: [train] group_size: must be at least 2 (got 1)");
  EXPECT_NE(render_docs_markdown().find("[train] stpes: unknown key; did you mean 'steps'?\n"),
            std::string::npos);
}

TEST(ConfigLoadErrors, SyntaxErrorReportsTomlPosition) {
  std::string e = load_error("[compiler]\nworkers = = 2\n");
  EXPECT_TRUE(starts_with(e, "x.toml:2:")) << e;
  EXPECT_NE(e.find("TOML syntax error: "), std::string::npos) << e;
  e = load_error("[compiler]\nworkers = 2\nworkers = 3\n");
  EXPECT_TRUE(starts_with(e, "x.toml:3:")) << e;
  EXPECT_NE(e.find("TOML syntax error: "), std::string::npos) << e;
}

TEST(ConfigLoadErrors, ApplyStringLeavesConfigUnchangedOnError) {
  leap_config c = defaults();
  c.compiler.workers = 7;
  leap_config before = c;
  auto r = apply_string(c, "[compiler]\nworkers = 3\narch = 1\n", "x.toml");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(c, before);
  ASSERT_TRUE(apply_string(c, "[executor]\ntrials = 3\n", "y.toml").ok());
  EXPECT_EQ(c.compiler.workers, 7); // layering keeps earlier values
  EXPECT_EQ(c.executor.trials, 3);
}

TEST(ConfigLoadFile, MissingFile) {
  auto r = load_file("/nonexistent/leap.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(starts_with(r.message(), "/nonexistent/leap.toml: cannot open config file"))
      << r.message();
}

TEST(ConfigLoadFile, ErrorsNameTheFile) {
  std::string path = std::string(LEAP_TEST_OUTPUT_DIR) + "/config_test_bad.toml";
  {
    std::ofstream out(path);
    out << "[compiler]\nworkers = 2\nwrokers = 3\n";
  }
  auto r = load_file(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), path + ":3:1: [compiler] wrokers: unknown key; did you mean 'workers'?");
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------------------------
// --set.

TEST(ConfigOverride, EachType) {
  leap_config c = defaults();
  ASSERT_TRUE(apply_override(c, "compiler.workers=6").ok());
  EXPECT_EQ(c.compiler.workers, 6);
  ASSERT_TRUE(apply_override(c, "executor.timeout_seconds=12.5").ok());
  EXPECT_DOUBLE_EQ(c.executor.timeout_seconds, 12.5);
  ASSERT_TRUE(apply_override(c, "compiler.timeout_seconds=7").ok()); // int for a float key
  EXPECT_DOUBLE_EQ(c.compiler.timeout_seconds, 7.0);
  ASSERT_TRUE(apply_override(c, "compiler.arch=sm_80").ok()); // unquoted string
  EXPECT_EQ(c.compiler.arch, "sm_80");
  ASSERT_TRUE(apply_override(c, "compiler.arch=\"sm_86\"").ok()); // quoted string
  EXPECT_EQ(c.compiler.arch, "sm_86");
  ASSERT_TRUE(apply_override(c, "compiler.host_cxx='clang++'").ok()); // TOML literal string
  EXPECT_EQ(c.compiler.host_cxx, "clang++");
  ASSERT_TRUE(apply_override(c, "environment.tasks_dir=/a b/c=d").ok()); // '=' in the value
  EXPECT_EQ(c.environment.tasks_dir, "/a b/c=d");
  ASSERT_TRUE(apply_override(c, "environment.tasks_dir=").ok()); // empty string
  EXPECT_EQ(c.environment.tasks_dir, "");
  ASSERT_TRUE(apply_override(c, "environment.backend=cuda").ok()); // enum
  EXPECT_EQ(c.environment.backend, backend_kind::cuda);
  ASSERT_TRUE(apply_override(c, "compiler.nvcc_flags=[\"-O3\",\"-g\"]").ok()); // list
  EXPECT_EQ(c.compiler.nvcc_flags, (std::vector<std::string>{"-O3", "-g"}));
  ASSERT_TRUE(apply_override(c, "compiler.emu_flags=[]").ok());
  EXPECT_TRUE(c.compiler.emu_flags.empty());
  ASSERT_TRUE(apply_override(c, " executor.seed = 42 ").ok()); // spaces around key and value
  EXPECT_EQ(c.executor.seed, 42u);
  ASSERT_TRUE(apply_override(c, "cuda.l2_flush_mb=0").ok());
  EXPECT_EQ(c.cuda.l2_flush_mb, 0);
}

TEST(ConfigOverride, BooleanValues) {
  // No boolean key is registered yet; exercise the parser with a stand-in descriptor.
  key_descriptor d;
  d.section = "test";
  d.name = "flag";
  d.kind = value_kind::boolean;
  auto t = parse_override_value(d, "true");
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(*t, value(true));
  auto f = parse_override_value(d, " false ");
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(*f, value(false));
  auto bad = parse_override_value(d, "yes");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "expected a boolean (true or false), got 'yes'");
  auto one = parse_override_value(d, "1");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.message(), "expected a boolean (true or false), got an integer (1)");
  EXPECT_EQ(value_to_toml(value(true)), "true");
}

TEST(ConfigOverride, UnknownKey) {
  EXPECT_EQ(set_error("compiler.wrokers=3"),
            "--set compiler.wrokers=3: [compiler] wrokers: unknown key; did you mean 'workers'?");
  EXPECT_EQ(set_error("exector.trials=3"),
            "--set exector.trials=3: [exector]: unknown section; did you mean [executor]?");
  EXPECT_EQ(set_error("compiler.seed=3"),
            "--set compiler.seed=3: [compiler] seed: unknown key; 'seed' is a key of [executor], "
            "[sft], [eval], [train]");
  EXPECT_EQ(set_error("workers=3"),
            "--set workers=3: expected section.key=value; did you mean 'compiler.workers' or "
            "'executor.workers'?");
  EXPECT_EQ(set_error("compiler.workers"),
            "--set compiler.workers: expected section.key=value (e.g. compiler.workers=4)");
  EXPECT_EQ(set_error("compiler.workers.x=3"),
            "--set compiler.workers.x=3: [compiler] workers.x: unknown key; did you mean "
            "'workers'?");
}

TEST(ConfigOverride, BadValues) {
  EXPECT_EQ(set_error("compiler.workers=abc"),
            "--set compiler.workers=abc: [compiler] workers: expected an integer, got 'abc'");
  EXPECT_EQ(set_error("compiler.workers="),
            "--set compiler.workers=: [compiler] workers: expected an integer, got nothing");
  EXPECT_EQ(set_error("compiler.workers=2.5"),
            "--set compiler.workers=2.5: [compiler] workers: expected an integer, got a float "
            "(2.5)");
  EXPECT_EQ(set_error("compiler.workers=\"4\""),
            "--set compiler.workers=\"4\": [compiler] workers: expected an integer, got a "
            "string (\"4\")");
  EXPECT_EQ(set_error("compiler.workers=4 x=5"),
            "--set compiler.workers=4 x=5: [compiler] workers: expected an integer, got '4 x=5'");
  EXPECT_EQ(set_error("compiler.workers=0"),
            "--set compiler.workers=0: [compiler] workers: must be at least 1 (got 0)");
  EXPECT_EQ(set_error("executor.timeout_seconds=soon"),
            "--set executor.timeout_seconds=soon: [executor] timeout_seconds: expected a number, "
            "got 'soon'");
  EXPECT_EQ(set_error("executor.timeout_seconds=-1"),
            "--set executor.timeout_seconds=-1: [executor] timeout_seconds: must be greater than "
            "0 (got -1.0)");
  EXPECT_EQ(set_error("environment.backend=gpu"),
            "--set environment.backend=gpu: [environment] backend: must be one of \"auto\", "
            "\"cpu\", \"cuda\" (got \"gpu\")");
  EXPECT_EQ(set_error("compiler.nvcc_flags=-O3"),
            "--set compiler.nvcc_flags=-O3: [compiler] nvcc_flags: expected an array of strings "
            "such as [\"-O3\", \"-g\"], got '-O3'");
  EXPECT_EQ(set_error("compiler.nvcc_flags=[\"-O3\", 1]"),
            "--set compiler.nvcc_flags=[\"-O3\", 1]: [compiler] nvcc_flags: element [1]: "
            "expected a string, got an integer (1)");
  std::string e = set_error("compiler.nvcc_flags=[\"-O3\"");
  EXPECT_TRUE(starts_with(e, "--set compiler.nvcc_flags=[\"-O3\": [compiler] nvcc_flags: "
                             "expected an array of strings"))
      << e;
  e = set_error("compiler.arch=\"sm_90");
  EXPECT_TRUE(starts_with(e, "--set compiler.arch=\"sm_90: [compiler] arch: expected a string, "
                             "got '\"sm_90'"))
      << e;
  EXPECT_EQ(set_error("compiler.arch="),
            "--set compiler.arch=: [compiler] arch: must not be empty");
}

// ---------------------------------------------------------------------------------------------
// Rendering.

TEST(ConfigToml, DefaultsRoundTrip) {
  for (bool comments : {false, true}) {
    std::string text = to_toml(defaults(), comments);
    auto r = load_string(text, "roundtrip.toml");
    ASSERT_TRUE(r.ok()) << r.message() << "\n" << text;
    EXPECT_EQ(*r, defaults()) << text;
  }
}

TEST(ConfigToml, NonDefaultValuesRoundTrip) {
  leap_config c = defaults();
  c.environment.backend = backend_kind::cuda;
  c.environment.tasks_dir = "C:\\tasks \"quoted\"\ttab\nnewline \x01 ü";
  c.environment.cache_dir = "'single'";
  c.compiler.workers = 2147483647;
  c.compiler.nvcc_flags = {};
  c.compiler.emu_flags = {"-DX=\"y\"", "", "-I/a\\b"};
  c.compiler.timeout_seconds = 0.1;
  c.executor.timeout_seconds = 1e-7;
  c.executor.seed = 9007199254740993ull;
  c.cuda.l2_flush_mb = 0;
  std::string text = to_toml(c);
  auto r = load_string(text, "roundtrip.toml");
  ASSERT_TRUE(r.ok()) << r.message() << "\n" << text;
  EXPECT_EQ(*r, c) << text;
}

TEST(ConfigToml, ListsEveryKeyInRegistryOrder) {
  std::string text = to_toml(defaults());
  EXPECT_TRUE(starts_with(text, "[environment]\nbackend = \"auto\"\ntasks_dir = \"\"\n")) << text;
  EXPECT_NE(text.find("\n[compiler]\nworkers = 2\nnvcc = \"\"\narch = \"sm_90\"\n"
                      "nvcc_flags = [\"-O3\", \"-std=c++17\"]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("timeout_seconds = 120.0\n"), std::string::npos) << text;
  std::size_t last = 0;
  for (const auto& s : schema().sections()) {
    std::size_t at = text.find("[" + s.name + "]\n");
    ASSERT_NE(at, std::string::npos) << s.name;
    EXPECT_GE(at, last);
    last = at;
  }
}

TEST(ConfigDocs, DocsFileIsInSyncWithTheRegistry) {
  const std::string expected = render_docs_markdown();
  const char* update = std::getenv("LEAP_UPDATE_DOCS");
  if (update && std::string(update) == "1") {
    std::ofstream out(LEAP_CONFIG_DOCS_PATH, std::ios::binary);
    out << expected;
    ASSERT_TRUE(out.good()) << "cannot write " << LEAP_CONFIG_DOCS_PATH;
    std::printf("wrote %s\n", LEAP_CONFIG_DOCS_PATH);
    return;
  }
  const std::string actual = read_text(LEAP_CONFIG_DOCS_PATH);
  if (actual != expected) {
    const std::string fresh = std::string(LEAP_TEST_OUTPUT_DIR) + "/config.md.expected";
    std::ofstream(fresh, std::ios::binary) << expected;
    ADD_FAILURE() << LEAP_CONFIG_DOCS_PATH
                  << " is out of date with the key registry. Regenerate it with\n"
                     "  LEAP_UPDATE_DOCS=1 "
                  << LEAP_TEST_OUTPUT_DIR
                  << "/test_runtime_config --gtest_filter=ConfigDocs.*\n"
                     "or copy "
                  << fresh << " over it.";
  }
}

TEST(ConfigDocs, MarkdownHasATablePerSection) {
  std::string md = render_docs_markdown();
  EXPECT_TRUE(starts_with(md, "# Configuration reference\n")) << md;
  for (const auto& s : schema().sections()) {
    EXPECT_NE(md.find("\n## [" + s.name + "]\n"), std::string::npos) << s.name;
    for (const auto& k : s.keys)
      EXPECT_NE(md.find("\n| `" + k.name + "` | "), std::string::npos) << k.full_name();
  }
  EXPECT_NE(md.find("| `workers` | integer >= 1 | `2` | Compile jobs run concurrently. |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `backend` | one of `auto`, `cpu`, `cuda` | `\"auto\"` |"), std::string::npos)
      << md;
}

// ---------------------------------------------------------------------------------------------
// Shipped configs.

TEST(ConfigFiles, DefaultTomlListsEveryKeyWithItsDefault) {
  const std::string path = std::string(LEAP_SOURCE_DIR) + "/configs/default.toml";
  auto r = load_file(path);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(*r, defaults());
  toml::table t = toml::parse_file(path);
  for (const auto& s : schema().sections())
    for (const auto& k : s.keys)
      EXPECT_TRUE(t.at_path(k.full_name())) << path << " does not list " << k.full_name();
}

TEST(ConfigFiles, QuickstartTomlLoads) {
  auto r = load_file(std::string(LEAP_SOURCE_DIR) + "/configs/quickstart.toml");
  ASSERT_TRUE(r.ok()) << r.message();
}

// ---------------------------------------------------------------------------------------------
// Suggestions.

TEST(ConfigSuggest, EditDistanceAndClosestMatch) {
  EXPECT_EQ(edit_distance("workers", "workers"), 0u);
  EXPECT_EQ(edit_distance("wrokers", "workers"), 1u); // transposition
  EXPECT_EQ(edit_distance("worker", "workers"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  std::vector<std::string> keys = {"workers", "timeout_seconds", "trials"};
  EXPECT_EQ(closest_match("timout_seconds", keys), std::optional<std::string>("timeout_seconds"));
  EXPECT_EQ(closest_match("trails", keys), std::optional<std::string>("trials"));
  EXPECT_EQ(closest_match("zzz", keys), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// Enum keys and the rules across keys.

TEST(ConfigEnums, ModesAndEstimatorsAreEnumsWithTheirNames) {
  auto c = load_string("[train]\nmode = \"sync\"\nbatch_order = \"admission\"\n"
                       "estimator = \"trloo\"\ntie_keys = [\"tokens\"]\n"
                       "[learner]\naggregation = \"dr_grpo\"\n", "x.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->train.mode, msg::train_mode::sync);
  EXPECT_EQ(c->train.batch_order, msg::batch_order::admission);
  EXPECT_EQ(c->train.estimator, algo::estimator::trloo);
  EXPECT_EQ(c->train.tie_keys, (std::vector<algo::tie_key>{algo::tie_key::tokens}));
  EXPECT_EQ(c->learner.aggregation, policy::loss_aggregation::dr_grpo);
  // And back to the same TOML.
  auto again = load_string(to_toml(*c), "again.toml");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*again, *c);
  EXPECT_EQ(*get_value_toml(*c, "train.tie_keys"), "[\"tokens\"]");
}

TEST(ConfigEnums, BadNamesAreErrorsWithPositionAndTheAllowedValues) {
  EXPECT_EQ(load_error("[train]\nmode = \"fast\"\n"),
            "x.toml:2:8: [train] mode: must be one of \"async\", \"sync\" (got \"fast\")");
  // A list's element is reported at its own position.
  EXPECT_EQ(load_error("[train]\ntie_keys = [\"speedup\", \"latency\"]\n"),
            "x.toml:2:24: [train] tie_keys: element [1]: must be one of \"speedup\", \"tokens\" "
            "(got \"latency\")");
  EXPECT_EQ(load_error("[train]\ntie_keys = [\"tokens\", \"tokens\"]\n"),
            "x.toml:2:23: [train] tie_keys: element [1]: \"tokens\" is listed twice");
  EXPECT_EQ(set_error("learner.aggregation=mean"),
            "--set learner.aggregation=mean: [learner] aggregation: must be one of "
            "\"token_mean\", \"dr_grpo\" (got \"mean\")");
}

TEST(ConfigConsistency, DcpThresholdsOutOfOrderNameFileLineAndBothKeys) {
  auto e = load_error("[train]\ndcp_t_min = 0.8\ndcp_t_max = 0.5\n");
  EXPECT_EQ(e, "x.toml:2:1: [train] dcp_t_min: must be at most train.dcp_t_max = 0.5 (got 0.8; "
               "train.dcp_t_min from x.toml:2:1, train.dcp_t_max from x.toml:3:1): DCP would never "
               "expand a group");
  // A default on one side: the error is about the key that was set, and the default says so.
  EXPECT_EQ(load_error("[train]\ndcp_t_max = 0.25\n"),
            "x.toml:2:1: [train] dcp_t_max: must be at least train.dcp_t_min = 0.5 (got 0.25; "
            "train.dcp_t_max from x.toml:2:1, train.dcp_t_min from the default): DCP would never "
            "expand a group");
}

TEST(ConfigConsistency, ThresholdsWithinTheGroupSize) {
  EXPECT_EQ(load_error("[train]\ndcp_t_max = 1.5\n"),
            "x.toml:2:1: [train] dcp_t_max: must be at most 1 (got 1.5): it is a fraction of the "
            "group size (train.dcp_fractional = true, from the default)");
  EXPECT_EQ(load_error("[train]\ngroup_size = 4\ndcp_fractional = false\ndcp_t_min = 2\n"
                       "dcp_t_max = 6\n"),
            "x.toml:5:1: [train] dcp_t_max: must be at most train.group_size = 4 (got 6.0; "
            "train.group_size from x.toml:2:1): it is a count of failures (train.dcp_fractional "
            "= false, from x.toml:3:1)");
  EXPECT_TRUE(load_string("[train]\ngroup_size = 8\ndcp_fractional = false\ndcp_t_min = 2\n"
                          "dcp_t_max = 6\n", "x.toml").ok());
}

TEST(ConfigConsistency, SelfRepairStepsAreTheLastOfMaxSteps) {
  EXPECT_EQ(load_error("[sft]\nmax_steps = 100\nself_repair_steps = 100\n"),
            "x.toml:3:1: [sft] self_repair_steps: must be less than sft.max_steps = 100 (got 100; "
            "sft.self_repair_steps from x.toml:3:1, sft.max_steps from x.toml:2:1): the "
            "self-repair steps are the last of max_steps, after the warm start they sample from "
            "(max_steps = 0, a time budget only, has no last steps)");
  auto d = load_error("[sft]\nself_repair_steps = 20\n");
  EXPECT_NE(d.find("x.toml:2:1: [sft] self_repair_steps: must be less than sft.max_steps = 0 (got "
                   "20; sft.self_repair_steps from x.toml:2:1, sft.max_steps from the default)"),
            std::string::npos) << d;
  leap_config c = defaults();
  key_origins origins;
  ASSERT_TRUE(apply_string(c, "[sft]\nself_repair_steps = 20\n", "d.toml", {}, &origins).ok());
  ASSERT_TRUE(apply_override(c, "sft.max_steps=10", &origins).ok());
  origins.erase("sft.self_repair_steps"); // as if it held its default: the error is max_steps'
  EXPECT_NE(check_consistency(c, origins).message().find(
                "--set sft.max_steps=10: [sft] max_steps: must be greater than "
                "sft.self_repair_steps = 20 (got 10; "),
            std::string::npos) << check_consistency(c, origins).message();
  EXPECT_TRUE(load_string("[sft]\nmax_steps = 100\nself_repair_steps = 99\n", "x.toml").ok());
  EXPECT_TRUE(load_string("[sft]\nself_repair_steps = 0\n", "x.toml").ok());
}

TEST(ConfigConsistency, ACorpusWithoutBundledTasksNeedsOthers) {
  EXPECT_EQ(load_error("[sft]\nbundled_tasks = false\n"),
            "x.toml:2:1: [sft] bundled_tasks: is false, with sft.tasks empty (from the default) "
            "and sft.generated_tasks = 0 (from the default): the corpus would be empty; name "
            "tasks in sft.tasks, set sft.generated_tasks, or leave sft.bundled_tasks true");
  EXPECT_TRUE(load_string("[sft]\nbundled_tasks = false\ngenerated_tasks = 10\n", "x.toml").ok());
  EXPECT_TRUE(load_string("[sft]\nbundled_tasks = false\ntasks = [\"relu\"]\n", "x.toml").ok());
}

TEST(ConfigConsistency, ParaphrasesAndWrittenFormsAreOfTheStagesGeneratedTasks) {
  EXPECT_TRUE(load_string("[sft]\ngenerated_tasks = 10\ngenerated_paraphrases = 10\n", "x.toml").ok());
  EXPECT_EQ(load_error("[sft]\ngenerated_tasks = 3\ngenerated_paraphrases = 5\n"),
            "x.toml:3:1: [sft] generated_paraphrases: is 5, more than sft.generated_tasks = 3 (from "
            "x.toml:2:1): paraphrases are of the first N of those tasks; lower it or raise "
            "sft.generated_tasks");
  EXPECT_TRUE(load_string("[sft]\ngenerated_tasks = 10\ngenerated_written = 10\n", "x.toml").ok());
  EXPECT_EQ(load_error("[sft]\ngenerated_tasks = 3\ngenerated_written = 4\n"),
            "x.toml:3:1: [sft] generated_written: is 4, more than sft.generated_tasks = 3 (from "
            "x.toml:2:1): written forms are of the first N of those tasks; lower it or raise "
            "sft.generated_tasks");
  EXPECT_TRUE(load_string("[sft]\ngenerated_tasks = 10\ngenerated_notation = 10\n", "x.toml").ok());
  EXPECT_EQ(load_error("[sft]\ngenerated_tasks = 3\ngenerated_notation = 7\n"),
            "x.toml:3:1: [sft] generated_notation: is 7, more than sft.generated_tasks = 3 (from "
            "x.toml:2:1): notation forms are of the first N of those tasks; lower it or raise "
            "sft.generated_tasks");
}

TEST(ConfigConsistency, GeneratedFamilyWeightsAreFamilyEqualsAPositiveNumber) {
  EXPECT_TRUE(load_string("[sft]\ngenerated_family_weights = [\"red=6\", \"scan = 2.5\"]\n",
                          "x.toml").ok());
  EXPECT_EQ(load_error("[sft]\ngenerated_family_weights = [\"reductions=6\"]\n"),
            "x.toml:2:1: [sft] generated_family_weights: 'reductions=6' is not family=weight with "
            "a family of ew, red, bcast, softmax, scan, pool, matmul, layout, stencil");
  EXPECT_EQ(load_error("[sft]\ngenerated_family_weights = [\"red\"]\n"),
            "x.toml:2:1: [sft] generated_family_weights: 'red' is not family=weight with a family "
            "of ew, red, bcast, softmax, scan, pool, matmul, layout, stencil");
  for (const std::string bad : {"red=0", "red=-1", "red=x", "red=", "red=2000"})
    EXPECT_EQ(load_error("[sft]\ngenerated_family_weights = [\"" + bad + "\"]\n"),
              "x.toml:2:1: [sft] generated_family_weights: '" + bad
                  + "': the weight must be a number in (0, 1000]");
  EXPECT_EQ(load_error("[sft]\ngenerated_family_weights = [\"red=2\", \"red=3\"]\n"),
            "x.toml:2:1: [sft] generated_family_weights: family red is listed twice");
}

TEST(ConfigConsistency, AWarmStartPinIsASha256OfASetWarmStart) {
  const std::string pin(64, 'a');
  EXPECT_TRUE(load_string("[train]\nwarm_start = \"w\"\nwarm_start_sha256 = \"" + pin + "\"\n",
                          "x.toml").ok());
  EXPECT_EQ(load_error("[train]\nwarm_start = \"w\"\nwarm_start_sha256 = \"ABC\"\n"),
            "x.toml:3:1: [train] warm_start_sha256: must be a SHA-256, 64 lower-case hex digits "
            "(got \"ABC\")");
  EXPECT_EQ(load_error("[train]\nwarm_start_sha256 = \"" + pin + "\"\n"),
            "x.toml:2:1: [train] warm_start_sha256: pins a warm start, but train.warm_start is "
            "empty (from the default): set the checkpoint it pins, or clear the pin");
}

TEST(ConfigConsistency, AddressesAndTlsFilesNameTheirKey) {
  EXPECT_EQ(load_error("[cluster]\nnodes = [\"127.0.0.1\"]\n"),
            "x.toml:2:1: [cluster] nodes: '127.0.0.1' is not HOST:PORT");
  EXPECT_EQ(load_error("[cluster]\nnodes = [\"127.0.0.1:0\"]\n"),
            "x.toml:2:1: [cluster] nodes: '127.0.0.1:0' needs a port");
  EXPECT_EQ(load_error("[serve]\ntls_cert = \"c.pem\"\n"),
            "x.toml:2:1: [serve] tls_cert: serve.tls_cert and serve.tls_key go together: set "
            "both (HTTPS) or neither");
}

TEST(ConfigConsistency, OverridesAreCheckedOnceEveryLayerIsApplied) {
  // Each --set alone would break the rule; together with the file they do not.
  leap_config cfg = defaults();
  key_origins origins;
  ASSERT_TRUE(apply_string(cfg, "[train]\ndcp_fractional = false\n", "f.toml", {}, &origins).ok());
  ASSERT_TRUE(apply_override(cfg, "train.dcp_t_min=3", &origins).ok());
  ASSERT_TRUE(apply_override(cfg, "train.dcp_t_max=5", &origins).ok());
  EXPECT_TRUE(check_consistency(cfg, origins).ok());
  ASSERT_TRUE(apply_override(cfg, "train.group_size=4", &origins).ok());
  auto r = check_consistency(cfg, origins);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "--set train.dcp_t_max=5: [train] dcp_t_max: must be at most "
                         "train.group_size = 4 (got 5.0; train.group_size from --set "
                         "train.group_size=4): it is a count of failures (train.dcp_fractional = "
                         "false, from f.toml:2:1)");
}

} // namespace
} // namespace leap::config
