#include "bench/pipeline/scenario.hpp"

#include "common/strings.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

namespace leap::bench {

namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct reader {
  struct located {
    std::uint32_t line, column;
    std::string text;
  };
  std::string file;
  std::vector<located> errors;

  void error_at(toml::source_position p, const std::string& key, const std::string& what) {
    errors.push_back({p.line, p.column,
                      file + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": "
                        + key + ": " + what});
  }
  void error(const toml::node& n, const std::string& key, const std::string& what) {
    error_at(n.source().begin, key, what);
  }
  // In file order, one per line.
  std::string message() const {
    auto sorted = errors;
    std::stable_sort(sorted.begin(), sorted.end(), [](const located& a, const located& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    std::vector<std::string> lines;
    for (auto& e : sorted)
      lines.push_back(e.text);
    return join(lines, "\n");
  }
  // Unknown keys of a table are errors naming the allowed ones.
  void only(const toml::table& t, const std::string& prefix, const std::vector<std::string>& keys) {
    for (auto&& [k, v] : t)
      if (std::find(keys.begin(), keys.end(), std::string(k.str())) == keys.end())
        error_at(k.source().begin.line ? k.source().begin : v.source().begin,
                 prefix + "." + std::string(k.str()), "unknown key (known: " + join(keys, ", ") + ")");
  }
  bool number(const toml::table& t, const std::string& prefix, const char* key, double& out,
              double min, bool min_exclusive) {
    auto* n = t.get(key);
    if (!n)
      return false;
    std::optional<double> v;
    if (auto i = n->value<std::int64_t>(); i && n->is_integer())
      v = static_cast<double>(*i);
    else if (n->is_floating_point())
      v = n->value<double>();
    if (!v) {
      error(*n, prefix + "." + key, "expected a number");
      return false;
    }
    if (!std::isfinite(*v) || (min_exclusive ? *v <= min : *v < min)) {
      error(*n, prefix + "." + key,
            std::string("must be ") + (min_exclusive ? "> " : ">= ") + format_double(min));
      return false;
    }
    out = *v;
    return true;
  }
  bool integer(const toml::table& t, const std::string& prefix, const char* key, std::int64_t& out,
               std::int64_t min) {
    auto* n = t.get(key);
    if (!n)
      return false;
    if (!n->is_integer()) {
      error(*n, prefix + "." + key, "expected an integer");
      return false;
    }
    auto v = *n->value<std::int64_t>();
    if (v < min) {
      error(*n, prefix + "." + key, "must be >= " + std::to_string(min));
      return false;
    }
    out = v;
    return true;
  }
  bool text(const toml::table& t, const std::string& prefix, const char* key, std::string& out,
            const std::vector<std::string>& allowed = {}) {
    auto* n = t.get(key);
    if (!n)
      return false;
    if (!n->is_string()) {
      error(*n, prefix + "." + key, "expected a string");
      return false;
    }
    auto v = *n->value<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      error(*n, prefix + "." + key, "'" + v + "' is not one of " + join(allowed, ", "));
      return false;
    }
    out = v;
    return true;
  }
  const toml::table* table(const toml::table& t, const std::string& prefix, const char* key) {
    auto* n = t.get(key);
    if (!n)
      return nullptr;
    if (!n->is_table()) {
      error(*n, prefix + "." + key, "expected a table ([" + prefix + "." + key + "])");
      return nullptr;
    }
    return n->as_table();
  }

  void stage(const toml::table& b, const char* key, const std::string& real_name, stage_model& out,
             std::vector<std::string> extra_keys = {}) {
    const std::string prefix = std::string("bench.") + key;
    auto* t = table(b, "bench", key);
    if (!t)
      return;
    std::vector<std::string> keys{"model", "mean_seconds", "sigma"};
    keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
    only(*t, prefix, keys);
    std::string model = out.name;
    text(*t, prefix, "model", model, {"fixed", "lognormal", real_name});
    out.name = model;
    out.real = model == real_name;
    out.dist.k = model == "lognormal" ? latency_dist::kind::lognormal : latency_dist::kind::fixed;
    number(*t, prefix, "mean_seconds", out.dist.mean, 0.0, false);
    number(*t, prefix, "sigma", out.dist.sigma, 0.0, false);
    if (!out.real && out.dist.mean <= 0.0 && out.dist.k == latency_dist::kind::lognormal)
      error(*t, prefix + ".mean_seconds", "a lognormal latency needs mean_seconds > 0");
  }
};

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
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  toml::table root;
  try {
    root = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    return make_error(path + ": " + std::string(e.description())); // apply_file reported it first
  }
  reader rd{path, {}};
  auto* bn = root.get("bench");
  if (!bn)
    return make_error(path + ": a scenario needs a [bench] section (see configs/bench/compile_bound.toml)");
  if (!bn->is_table())
    return make_error(path + ": 'bench' must be a table ([bench])");
  const auto& b = *bn->as_table();
  rd.only(b, "bench", {"time_scale", "seed", "timeline_step", "generate", "compile", "execute",
                       "learner", "tasks", "nodes", "overhead_jobs"});
  if (auto* nn = b.get("nodes")) {
    auto* arr = nn->as_array();
    bool ok = arr && !arr->empty();
    for (std::size_t i = 0; ok && i < arr->size(); ++i) {
      auto v = arr->get(i)->value<std::int64_t>();
      ok = arr->get(i)->is_integer() && v && *v >= 0 && *v <= 16;
      if (ok)
        s.nodes.push_back(static_cast<int>(*v));
    }
    if (!ok)
      rd.error(*nn, "bench.nodes", "expected a non-empty array of node counts from 0 (in-process) to 16");
  }
  if (std::int64_t ov = 0; rd.integer(b, "bench", "overhead_jobs", ov, 0))
    s.overhead_jobs = static_cast<int>(ov);
  rd.number(b, "bench", "time_scale", s.time_scale, 0.0, true);
  std::int64_t iv = 0;
  if (rd.integer(b, "bench", "seed", iv, 0))
    s.seed = static_cast<std::uint64_t>(iv);
  if (rd.integer(b, "bench", "timeline_step", iv, 0))
    s.timeline_step = static_cast<int>(iv);
  rd.stage(b, "generate", "policy", s.generate, {"checkpoint"});
  rd.stage(b, "compile", "nvcc", s.compile, {"source"});
  rd.stage(b, "execute", "backend", s.execute);
  if (auto* g = rd.table(b, "bench", "generate"))
    rd.text(*g, "bench.generate", "checkpoint", s.checkpoint);
  if (auto* c = rd.table(b, "bench", "compile"))
    rd.text(*c, "bench.compile", "source", s.compile_source, {"bundled", "policy"});
  if (auto* l = rd.table(b, "bench", "learner")) {
    rd.only(*l, "bench.learner", {"seconds"});
    rd.number(*l, "bench.learner", "seconds", s.learner_seconds, 0.0, false);
  }
  if (auto* tn = b.get("tasks")) {
    auto* arr = tn->as_array();
    if (!arr) {
      rd.error(*tn, "bench.tasks", "expected an array of tables ([[bench.tasks]])");
    } else {
      for (auto& el : *arr) {
        auto* t = el.as_table();
        if (!t) {
          rd.error(el, "bench.tasks", "expected a table ([[bench.tasks]])");
          continue;
        }
        task_class c;
        rd.only(*t, "bench.tasks", {"name", "count", "success"});
        if (!rd.text(*t, "bench.tasks", "name", c.name) || c.name.empty())
          rd.error(*t, "bench.tasks.name", "every task class needs a non-empty name");
        if (rd.integer(*t, "bench.tasks", "count", iv, 1))
          c.count = static_cast<int>(iv);
        auto* sn = t->get("success");
        if (!sn || !sn->is_array() || sn->as_array()->empty()) {
          rd.error(sn ? *sn : static_cast<const toml::node&>(*t), "bench.tasks.success",
                   "needs a non-empty array of per-turn pass probabilities, e.g. [0.5, 0.3, 0.2]");
        } else {
          for (auto& v : *sn->as_array()) {
            std::optional<double> p;
            if (v.is_floating_point())
              p = v.value<double>();
            else if (v.is_integer())
              p = static_cast<double>(*v.value<std::int64_t>());
            if (!p || *p < 0.0 || *p > 1.0) {
              rd.error(v, "bench.tasks.success", "each probability must be a number in [0, 1]");
              break;
            }
            c.success.push_back(*p);
          }
        }
        s.tasks.push_back(std::move(c));
      }
    }
  }
  if (!rd.errors.empty())
    return make_error(rd.message());
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
  if (!s.nodes.empty() && (s.compile.real || s.execute.real))
    return make_error("bench.nodes measures the cluster with latency-model compile and "
                      "execute stages (bench.compile.model and bench.execute.model must not be "
                      "real)");
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
  auto eq = assignment.find('=');
  if (eq == std::string::npos)
    return make_error("--set " + assignment + ": expected bench.key=value");
  std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  auto bad = [&](const std::string& why) { return make_error("--set " + assignment + ": " + why); };
  if (key == "bench.generate.checkpoint" || key == "bench.compile.source") {
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (key == "bench.generate.checkpoint")
      s.checkpoint = value;
    else if (value == "bundled" || value == "policy")
      s.compile_source = value;
    else
      return bad("'" + value + "' is not one of bundled, policy");
    if (auto r = validate(s); !r)
      return bad(r.message());
    return {};
  }
  auto num = [&](double& out) -> result<void> {
    try {
      std::size_t used = 0;
      out = std::stod(value, &used);
      if (used != value.size())
        throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      return make_error("--set " + assignment + ": '" + value + "' is not a number");
    }
    return {};
  };
  double v = 0;
  if (auto r = num(v); !r)
    return r;
  if (key == "bench.time_scale") {
    if (!(v > 0))
      return bad("must be > 0");
    s.time_scale = v;
  } else if (key == "bench.seed") {
    if (v < 0)
      return bad("must be >= 0");
    s.seed = static_cast<std::uint64_t>(v);
  } else if (key == "bench.timeline_step") {
    s.timeline_step = static_cast<int>(v);
  } else if (key == "bench.learner.seconds") {
    if (v < 0)
      return bad("must be >= 0");
    s.learner_seconds = v;
  } else {
    static const std::vector<std::pair<std::string, std::string>> stage_keys{
      {"bench.generate.mean_seconds", "generate_seconds"},
      {"bench.compile.mean_seconds", "compile_mean"},
      {"bench.compile.sigma", "compile_sigma"},
      {"bench.execute.mean_seconds", "execute_seconds"}};
    auto it = std::find_if(stage_keys.begin(), stage_keys.end(),
                           [&](const auto& p) { return p.first == key; });
    if (it == stage_keys.end())
      return bad("unknown key (known: bench.time_scale, bench.seed, bench.timeline_step, "
                 "bench.learner.seconds, bench.generate.mean_seconds, bench.generate.checkpoint, "
                 "bench.compile.mean_seconds, bench.compile.sigma, bench.compile.source, "
                 "bench.execute.mean_seconds)");
    if (auto r = apply_axis(s, it->second, v); !r)
      return bad(r.message());
  }
  if (auto r = validate(s); !r)
    return bad(r.message());
  return {};
}

} // namespace leap::bench
