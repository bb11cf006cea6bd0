#include "runtime/pipeline/services.hpp"

#include "common/fs.hpp"
#include "env/sandbox.hpp"
#include "env/taskgen/generator.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <sys/stat.h>

namespace fs = std::filesystem;

namespace leap::runtime {

namespace {

// Whether `dir` and every directory above it let others (the sandbox uid) through (o+x).
result<void> traversable_by_others(const std::string& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  for (fs::path at = p; !at.empty(); at = at.parent_path()) {
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0)
      return make_error("cannot stat " + at.string());
    if (!(st.st_mode & S_IXOTH)) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return make_error(at.string() + " (mode " + mode + ") is not traversable by others");
    }
    if (at == at.root_path())
      break;
  }
  return {};
}

} // namespace

taskgen::gen_options generated_options(const config::leap_config& cfg) {
  taskgen::gen_options o;
  o.seed = cfg.environment.generated_seed;
  o.train = cfg.environment.generated_tasks;
  o.eval_instances = cfg.environment.generated_eval_tasks;
  o.eval_compositions = cfg.environment.generated_eval_tasks;
  return o;
}

result<void> add_generated_tasks(services& s, const std::vector<std::string>& names,
                                 const std::string& what) {
  std::vector<std::string> missing;
  for (const auto& name : names)
    if (!s.tasks->count(name) && taskgen::is_generated_name(name))
      missing.push_back(name);
  if (missing.empty())
    return {};
  auto made = taskgen::generate_tasks(s.cfg.environment.generated_seed, missing);
  if (!made)
    return make_error(what + ": " + made.message());
  auto m = std::make_shared<std::map<std::string, env::task_spec>>(*s.tasks);
  for (auto& t : *made)
    (*m)[t.name] = std::move(t.spec);
  s.tasks = m;
  return {};
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("LEAP_CACHE_DIR"); d && *d)
    return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/leap";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/leap";
  return temp_root() + "/leap-cache";
}

services::~services() {
  // The runner first: it kills leftover children and runs their callbacks, which use the
  // compiler and the executor (so those must still exist), and launches nothing more. Then the
  // compiler and executor, the runner object, and the work dir.
  if (runner)
    runner->shutdown();
  executor.reset();
  compiler.reset();
  runner.reset();
  if (owns_work_dir && !work_dir.empty()) {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  }
}

result<std::unique_ptr<services>> make_services(const config::leap_config& cfg, bool load_tasks) {
  auto s = std::make_unique<services>();
  s->cfg = cfg;
  auto tc = env::discover_toolchain({cfg.compiler.nvcc, cfg.compiler.host_cxx});
  if (!tc)
    return tc.err();
  s->tools = std::move(*tc);
  switch (cfg.environment.backend) {
    case config::backend_kind::cpu:
      s->backend = env::backend::cpu;
      s->backend_reason = "environment.backend = \"cpu\"";
      break;
    case config::backend_kind::cuda:
      if (!s->tools.cuda_device)
        return make_error("environment.backend = \"cuda\" but no CUDA device is usable: "
                          + s->tools.cuda_device_name
                          + " (use backend = \"auto\" or \"cpu\" on this machine)");
      s->backend = env::backend::cuda;
      s->backend_reason = s->tools.cuda_device_name;
      break;
    case config::backend_kind::auto_select:
      s->backend = s->tools.cuda_device ? env::backend::cuda : env::backend::cpu;
      s->backend_reason = s->tools.cuda_device
                            ? "CUDA device: " + s->tools.cuda_device_name
                            : "no usable CUDA device (" + s->tools.cuda_device_name
                                + "): CPU emulation, correctness only";
      break;
  }
  if (s->backend == env::backend::cuda && s->tools.harness_cuda_lib.empty())
    return make_error("a CUDA device is usable but leap was built without the CUDA harness "
                      "(no CUDA headers at build time): rebuild with CUDA_HOME set");
  s->tasks_dir = cfg.environment.tasks_dir.empty() ? s->tools.tasks_dir() : cfg.environment.tasks_dir;
  s->cache_dir = cfg.environment.cache_dir.empty() ? default_cache_dir() : cfg.environment.cache_dir;
  // Workers run in their own directories: every path handed to them must be absolute.
  s->tasks_dir = fs::absolute(s->tasks_dir).lexically_normal().string();
  s->cache_dir = fs::absolute(s->cache_dir).lexically_normal().string();
  std::error_code ec;
  fs::create_directories(s->cache_dir + "/builds", ec);
  if (ec)
    return make_error("environment.cache_dir: cannot create " + s->cache_dir + "/builds: "
                      + ec.message());
  if (cfg.environment.work_dir.empty()) {
    auto wd = make_temp_dir(temp_root(), "leap-");
    if (!wd)
      return wd.err();
    s->work_dir = *wd;
    s->owns_work_dir = true;
  } else {
    s->work_dir = fs::absolute(cfg.environment.work_dir).lexically_normal().string();
    fs::create_directories(s->work_dir, ec);
    if (ec)
      return make_error("environment.work_dir: cannot create " + s->work_dir + ": " + ec.message());
  }
  if (load_tasks) {
    auto suite = env::load_task_suite(s->tasks_dir);
    if (!suite)
      return suite.err();
    // The generated tasks the configuration asks for (environment.generated_*), after the
    // bundled ones: same catalog, same suite hash.
    auto gen = taskgen::generated_specs(generated_options(cfg));
    if (!gen)
      return make_error("environment.generated_tasks: " + gen.message());
    suite->insert(suite->end(), gen->begin(), gen->end());
    auto m = std::make_shared<std::map<std::string, env::task_spec>>();
    for (auto& t : *suite)
      (*m)[t.name] = t;
    s->tasks = m;
  } else {
    s->tasks = std::make_shared<std::map<std::string, env::task_spec>>();
  }
  // Probe the candidate sandbox before any thread of ours exists (it forks a test child), and
  // say once what is missing and what leap falls back to.
  s->sandbox = env::probe_sandbox();
  if (cfg.executor.sandbox && !s->sandbox.notes.empty())
    for (auto& n : s->sandbox.notes)
      std::fprintf(stderr, "leap: sandbox: %s\n", n.c_str());
  if (!cfg.executor.sandbox)
    std::fprintf(stderr, "leap: executor.sandbox = false: candidates run WITHOUT Landlock, "
                         "seccomp, namespaces or a separate uid\n");
  // Candidates run as the sandbox uid in run directories under work_dir (the executor opens
  // work_dir itself to 0711): every directory above it must let that uid through, or every
  // candidate's exec fails (EACCES) and every attempt is dropped as an infrastructure fault.
  // Say so now, naming the directory.
  if (cfg.executor.sandbox && s->sandbox.drop_uid)
    if (auto r = traversable_by_others(fs::path(s->work_dir).parent_path().string()); !r)
      return make_error("environment.work_dir: " + r.message() + ": candidates run as uid " +
                        std::to_string(env::sandbox_uid) + " could not reach " + s->work_dir +
                        "; chmod o+x that directory or choose another environment.work_dir");
  s->runner = std::make_shared<env::process_runner>();
  env::compiler_options co;
  co.cache_dir = s->cache_dir;
  co.cache_max_bytes = static_cast<std::uint64_t>(cfg.environment.cache_max_mb) << 20;
  co.work_dir = s->work_dir;
  co.arch = cfg.compiler.arch;
  co.nvcc_flags = cfg.compiler.nvcc_flags;
  co.emu_flags = cfg.compiler.emu_flags;
  co.timeout_seconds = cfg.compiler.timeout_seconds;
  co.max_diagnostic_lines = cfg.compiler.max_diagnostic_lines;
  s->compiler = std::make_shared<env::compiler>(s->tools, co, *s->runner);
  env::executor_options eo;
  eo.work_dir = s->work_dir;
  eo.timeout_seconds = cfg.executor.timeout_seconds;
  eo.memory_limit_mb = cfg.executor.memory_limit_mb;
  eo.trials = cfg.executor.trials;
  eo.seed = cfg.executor.seed;
  eo.output_limit = static_cast<std::size_t>(cfg.executor.output_limit_kb) * 1024;
  eo.emu_threads = cfg.emulation.threads;
  eo.emu_stack_kb = cfg.emulation.fiber_stack_kb;
  eo.cuda_device = cfg.cuda.device;
  eo.warmup = cfg.cuda.warmup;
  eo.timing_runs = cfg.cuda.timing_runs;
  eo.l2_flush_mb = cfg.cuda.l2_flush_mb;
  eo.max_plausible_speedup = cfg.cuda.max_plausible_speedup;
  eo.check_repeat = cfg.executor.check_repeat;
  eo.sandbox = cfg.executor.sandbox;
  eo.caps = s->sandbox;
  s->executor = std::make_shared<env::executor>(eo, *s->runner);
  return s;
}

} // namespace leap::runtime
