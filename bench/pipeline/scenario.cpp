#include "bench/pipeline/scenario.hpp"

#include "common/strings.hpp"
#include "common/toml_schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace leap::bench {

namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

using toml_schema::checked_table;
using toml_schema::value;
using toml_schema::value_kind;

// One stage's table: a latency model (fixed or lognormal) or the real thing (`real_name`).
void declare_stage(toml_schema::table_schema& bench, const char* name, const char* real_name) {
  auto& t = bench.table(name);
  t.key("model", value_kind::string).one_of({"fixed", "lognormal", real_name});
  t.key("mean_seconds", value_kind::floating).at_least(0);
  t.key("sigma", value_kind::floating).at_least(0);
}

// The [bench] section of a scenario. The other sections are the config's (config::apply_file).
const toml_schema::table_schema& scenario_schema() {
  static const toml_schema::table_schema s = [] {
    toml_schema::table_schema root;
    root.open = true; // the ordinary sections: config::apply_file reads them
    auto& b = root.table("bench", "see configs/bench/compile_bound.toml", true);
    b.key("time_scale", value_kind::floating).greater_than(0);
    b.key("seed", value_kind::integer).at_least(0);
    b.key("timeline_step", value_kind::integer).at_least(0).fits<int>();
    b.key("nodes", value_kind::integer_list, "node counts from 0 (in-process) to 16")
      .non_empty().at_least(0).at_most(16);
    b.key("overhead_jobs", value_kind::integer).at_least(0).fits<int>();
    declare_stage(b, "generate", "policy");
    declare_stage(b, "compile", "nvcc");
    declare_stage(b, "execute", "backend");
    b.find_table("generate")->schema->key("checkpoint", value_kind::string);
    b.find_table("compile")->schema->key("source", value_kind::string)
      .one_of({"bundled", "policy"});
    b.table("learner").key("seconds", value_kind::floating).at_least(0);
    auto& tasks = b.table_array("tasks");
    tasks.key("name", value_kind::string).required().non_empty();
    tasks.key("count", value_kind::integer).at_least(1).fits<int>();
    tasks.key("success", value_kind::float_list, "per-turn pass probabilities, e.g. [0.5, 0.3]")
      .required().non_empty().at_least(0).at_most(1);
    return root;
  }();
  return s;
}

// Where each [bench] value goes, by table ("" = [bench] itself) and key: loading and --set both
// use it.
struct binding {
  const char* table;
  const char* key;
  void (*set)(scenario&, const value&);
};

void set_model(stage_model& m, const value& v, const char* real_name) {
  m.name = std::get<std::string>(v);
  m.real = m.name == real_name;
  m.dist.k = m.name == "lognormal" ? latency_dist::kind::lognormal : latency_dist::kind::fixed;
}

double number(const value& v) { return std::get<double>(v); }
int small_int(const value& v) { return static_cast<int>(std::get<std::int64_t>(v)); }

const std::vector<binding>& bindings() {
  using S = scenario;
  using V = value;
  static const std::vector<binding> all{
    {"", "time_scale", [](S& s, const V& v) { s.time_scale = number(v); }},
    {"", "seed", [](S& s, const V& v) { s.seed = std::get<std::int64_t>(v); }},
    {"", "timeline_step", [](S& s, const V& v) { s.timeline_step = small_int(v); }},
    {"", "overhead_jobs", [](S& s, const V& v) { s.overhead_jobs = small_int(v); }},
    {"", "nodes",
     [](S& s, const V& v) {
       s.nodes.clear();
       for (auto n : std::get<std::vector<std::int64_t>>(v))
         s.nodes.push_back(static_cast<int>(n));
     }},
    {"generate", "model", [](S& s, const V& v) { set_model(s.generate, v, "policy"); }},
    {"generate", "mean_seconds", [](S& s, const V& v) { s.generate.dist.mean = number(v); }},
    {"generate", "sigma", [](S& s, const V& v) { s.generate.dist.sigma = number(v); }},
    {"generate", "checkpoint", [](S& s, const V& v) { s.checkpoint = std::get<std::string>(v); }},
    {"compile", "model", [](S& s, const V& v) { set_model(s.compile, v, "nvcc"); }},
    {"compile", "mean_seconds", [](S& s, const V& v) { s.compile.dist.mean = number(v); }},
    {"compile", "sigma", [](S& s, const V& v) { s.compile.dist.sigma = number(v); }},
    {"compile", "source", [](S& s, const V& v) { s.compile_source = std::get<std::string>(v); }},
    {"execute", "model", [](S& s, const V& v) { set_model(s.execute, v, "backend"); }},
    {"execute", "mean_seconds", [](S& s, const V& v) { s.execute.dist.mean = number(v); }},
    {"execute", "sigma", [](S& s, const V& v) { s.execute.dist.sigma = number(v); }},
    {"learner", "seconds", [](S& s, const V& v) { s.learner_seconds = number(v); }},
  };
  return all;
}

// The stage a binding's table names (nullptr for [bench] and [bench.learner]).
stage_model* stage_of(scenario& s, const std::string& table) {
  return table == "generate" ? &s.generate
         : table == "compile" ? &s.compile
         : table == "execute" ? &s.execute : nullptr;
}

void set_dist_mean(stage_model& m, double v) { m.dist.mean = v; }

} // namespace

std::vector<std::string> scenario::task_names() const {
  std::vector<std::string> out;
  for (auto& c : tasks)
    for (int i = 1; i <= c.count; ++i)
      out.push_back(c.name + "_" + std::to_string(i));
  return out;
}

std::vector<std::vector<double>> scenario::task_success() const {
  std::vector<std::vector<double>> out;
  for (auto& c : tasks)
    for (int i = 1; i <= c.count; ++i)
      out.push_back(c.success);
  return out;
}

result<scenario> load_scenario(const std::string& path) {
  scenario s;
  s.path = path;
  s.name = std::filesystem::path(path).stem().string();
  s.generate.name = "fixed";
  s.compile.name = "fixed";
  s.execute.name = "fixed";
  s.cfg = config::defaults();
  if (auto r = config::apply_file(s.cfg, path, {"bench"}, &s.origins); !r)
    return r.err();
  auto root = toml_schema::parse_file(path, "scenario file");
  if (!root)
    return root.err();
  toml_schema::diagnostics diag(path);
  checked_table c = toml_schema::check(*root, scenario_schema(), diag);
  if (const checked_table* b = c.table("bench")) {
    for (const auto& bd : bindings()) {
      const checked_table* t = *bd.table ? b->table(bd.table) : b;
      if (const toml_schema::checked_key* k = t ? t->find(bd.key) : nullptr)
        bd.set(s, k->v);
    }
    for (const char* name : {"generate", "compile", "execute"}) {
      const checked_table* t = b->table(name);
      const stage_model* st = stage_of(s, name);
      if (t && !st->real && st->dist.k == latency_dist::kind::lognormal && !(st->dist.mean > 0))
        diag.add(t->position(), t->path.key("mean_seconds"),
                 "a lognormal latency needs mean_seconds > 0");
    }
    for (const auto& t : b->array("tasks")) {
      task_class tc;
      t.read("name", tc.name);
      if (auto n = t.get<std::int64_t>("count"))
        tc.count = static_cast<int>(*n);
      t.read("success", tc.success);
      s.tasks.push_back(std::move(tc));
    }
  }
  if (!diag.empty())
    return diag.error();
  if (auto r = validate(s); !r)
    return make_error(path + ": " + r.message());
  return s;
}

result<void> validate(const scenario& s) {
  if (auto r = config::check_consistency(s.cfg, s.origins); !r)
    return r;
  if (s.compile.real != s.execute.real)
    return make_error("bench.compile.model = \"nvcc\" and bench.execute.model = \"backend\" go "
                      "together: real executables need real builds, and the latency-model executor "
                      "needs the attempt keys of the latency-model compiler");
  if (s.generate.real && !s.compile.real)
    return make_error("bench.generate.model = \"policy\" needs the real environment (compile "
                      "\"nvcc\", execute \"backend\"): the latency models identify attempts by "
                      "keys only the latency-model generator writes");
  if (!s.nodes.empty() && s.any_real() && s.overhead_jobs > 0)
    return make_error("bench.overhead_jobs probes latency-model nodes (`leap bench node`); with "
                      "real stages bench.nodes starts `leap node` processes and reports their "
                      "jobs and CPU instead: remove bench.overhead_jobs");
  if (s.any_real() && s.time_scale != 1.0)
    return make_error("bench.time_scale must be 1 when a stage is real (real stages cannot be "
                      "sped up)");
  if (s.generate.real && s.checkpoint.empty())
    return make_error("bench.generate.model = \"policy\" needs bench.generate.checkpoint (a "
                      "`leap pretrain` output, e.g. assets/warm_start)");
  if (s.compile.real && !s.generate.real && s.compile_source == "policy")
    return make_error("bench.compile.source = \"policy\" needs a real policy (bench.generate.model "
                      "= \"policy\"); use \"bundled\"");
  if (!s.execute.real && s.tasks.empty())
    return make_error("a latency-model executor needs [[bench.tasks]] classes with per-turn "
                      "success probabilities");
  if (s.execute.real && !s.tasks.empty())
    return make_error("[[bench.tasks]] drive latency-model execution only; with bench.execute.model "
                      "= \"backend\" the verdicts are real (choose bundled tasks with train.tasks)");
  for (auto* st : {&s.generate, &s.compile, &s.execute})
    if (!st->real && st->dist.mean <= 0.0 && st->dist.k == latency_dist::kind::lognormal)
      return make_error("a lognormal latency needs mean_seconds > 0");
  if (s.cfg.train.steps < 1)
    return make_error("train.steps must be >= 1");
  return {};
}

const std::vector<std::string>& sweep_axes() {
  static const std::vector<std::string> axes{
    "compile_mean", "compile_sigma", "compilers", "generators", "executors",
    "generate_seconds", "execute_seconds", "learner_seconds", "batch_groups", "group_size"};
  return axes;
}

result<void> apply_axis(scenario& s, const std::string& axis, double v) {
  auto count = [&](int& field) -> result<void> {
    if (v < 1 || v != std::floor(v))
      return make_error(axis + " must be a whole number >= 1, got " + format_double(v));
    field = static_cast<int>(v);
    return {};
  };
  if (axis == "compilers")
    return count(s.cfg.compiler.workers);
  if (axis == "executors")
    return count(s.cfg.executor.workers);
  if (axis == "generators")
    return count(s.cfg.train.generators);
  if (axis == "batch_groups")
    return count(s.cfg.train.batch_groups);
  if (axis == "group_size")
    return count(s.cfg.train.group_size);
  if (v < 0 || !std::isfinite(v))
    return make_error(axis + " must be >= 0, got " + format_double(v));
  if (axis == "compile_mean")
    set_dist_mean(s.compile, v);
  else if (axis == "compile_sigma")
    s.compile.dist.sigma = v;
  else if (axis == "generate_seconds")
    set_dist_mean(s.generate, v);
  else if (axis == "execute_seconds")
    set_dist_mean(s.execute, v);
  else if (axis == "learner_seconds")
    s.learner_seconds = v;
  else
    return make_error("unknown sweep axis '" + axis + "' (known: " + join(sweep_axes(), ", ") + ")");
  if ((axis == "compile_mean" || axis == "compile_sigma") && s.compile.real)
    return make_error(axis + " applies to a latency-model compiler, not nvcc");
  if (axis == "generate_seconds" && s.generate.real)
    return make_error("generate_seconds applies to a latency-model generator, not the policy");
  if (axis == "execute_seconds" && s.execute.real)
    return make_error("execute_seconds applies to a latency-model executor, not the backend");
  return {};
}

result<void> apply_bench_override(scenario& s, const std::string& assignment) {
  auto bad = [&](const std::string& why) { return make_error("--set " + assignment + ": " + why); };
  auto eq = assignment.find('=');
  if (eq == std::string::npos)
    return bad("expected bench.key=value (e.g. bench.time_scale=1)");
  const std::string key(trim(std::string_view(assignment).substr(0, eq)));
  const binding* found = nullptr;
  std::vector<std::string> known;
  for (const auto& bd : bindings()) {
    std::string full =
      std::string("bench.") + (*bd.table ? std::string(bd.table) + "." : "") + bd.key;
    known.push_back(full);
    if (full == key)
      found = &bd;
  }
  if (!found) {
    auto m = toml_schema::closest_match(key, known);
    return bad("unknown key"
               + (m ? "; did you mean " + *m + "?" : "; known keys: " + join(known, ", ")));
  }
  const auto& bench = *scenario_schema().find_table("bench")->schema;
  const auto& table = *found->table ? *bench.find_table(found->table)->schema : bench;
  const toml_schema::key_rule& rule = *table.find_key(found->key);
  auto v = toml_schema::parse_value_text(rule, std::string_view(assignment).substr(eq + 1));
  if (!v)
    return bad(v.message());
  if (auto issue = toml_schema::check_value(rule, *v))
    return bad(issue->detail);
  const stage_model* st = stage_of(s, found->table);
  const std::string k = found->key;
  if (st && st->real && (k == "mean_seconds" || k == "sigma"))
    return bad("bench." + std::string(found->table) + " is the real " + st->name
               + ", not a latency model");
  scenario next = s;
  found->set(next, *v);
  if (auto r = validate(next); !r)
    return bad(r.message());
  s = std::move(next);
  return {};
}

} // namespace leap::bench
