#include "env/compiler.hpp"

#include "common/fs.hpp"
#include "common/json_text.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "env/cpu_emu/rewriter.hpp"
#include "env/feedback.hpp"
#include "env/glue.hpp"
#include "env/guards.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include <unistd.h>

namespace fs = std::filesystem;

namespace leap::env {

std::string build_executable(const std::string& cache_dir, const std::string& key) {
  return cache_dir + "/builds/" + key + "/worker";
}

const char* to_string(build_status s) {
  switch (s) {
    case build_status::ok: return "ok";
    case build_status::compile_error: return "compile_error";
    case build_status::rejected: return "rejected";
    case build_status::emulation_unsupported: return "emulation_unsupported";
    case build_status::timeout: return "timeout";
    case build_status::cancelled: return "cancelled";
    case build_status::internal_error: return "internal_error";
  }
  return "?";
}

namespace {

bool parse_build_status(const std::string& s, build_status& out) {
  for (int i = 0; i <= static_cast<int>(build_status::internal_error); ++i)
    if (s == to_string(static_cast<build_status>(i))) {
      out = static_cast<build_status>(i);
      return true;
    }
  return false;
}

// Added to compiler.nvcc_flags for the CPU backend's nvcc -cubin, whose cubin is thrown away:
// device code unoptimised (cicc and ptxas at -O0; ptxas still runs). Less CPU for that step
// (bench/compile_bench.cpp: device_O3 is the pipeline without them) with the same accept/reject
// and the same diagnostics on every bundled reference and candidate, the adversarial suite and
// the corpus. The CUDA backend builds with compiler.nvcc_flags alone.
const std::vector<std::string> cpu_syntax_check_flags{"-Xcicc", "-O0", "-Xptxas", "-O0"};

struct step {
  std::string stage;
  build_status fail_status;
  std::vector<std::string> argv;          // a child process, or
  std::function<result<void>()> in_process; // an in-process step
  compile_stage timing = compile_stage::other; // where its wall seconds count
  std::string nvcc_time_table;            // nvcc's --time output (relative to the build dir)
};

} // namespace

struct compiler::job {
  build_request req;
  task_spec task;
  std::function<void(build_result)> done;
  std::string key, dir, display_name;
  std::vector<step> steps;
  std::size_t next = 0;
  std::chrono::steady_clock::time_point t0;
  compile_stage_seconds stages;  // filled as the steps finish (on the runner's thread)
  std::mutex mtx;
  process_runner::handle current;
  std::optional<build_cache::key_lock> lock; // held from the lookup to the publish
  bool cancelled = false;
  bool finished = false;
};

namespace {

std::string find_flock_tool() {
  for (const char* p : {"/usr/bin/flock", "/bin/flock"})
    if (::access(p, X_OK) == 0)
      return p;
  return "";
}

} // namespace

compiler::compiler(toolchain tc, compiler_options opts, process_runner& runner)
  : tc_(std::move(tc)), opts_(std::move(opts)), runner_(runner),
    cache_(std::make_unique<build_cache>(build_cache_options{
      opts_.cache_dir, opts_.cache_max_bytes, opts_.cache_keep_recent_seconds, true})),
    flock_tool_(find_flock_tool()) {}

std::string compiler::cache_key(const task_spec& task, const build_request& req) const {
  std::vector<param> ps;
  for (auto& a : task.args)
    ps.push_back(a.p);
  sha256 h;
  h.field("leap-build-v1").field(to_string(req.backend)).field(req.reference ? "ref" : "cand");
  h.field(req.source).field(render_signature(ps)).field(opts_.arch);
  h.field(join(opts_.nvcc_flags, " ")).field(join(opts_.emu_flags, " "));
  if (req.backend == backend::cpu)
    h.field(join(cpu_syntax_check_flags, " "));
  h.field(tc_.nvcc_version).field(tc_.host_cxx_version).field(tc_.resources_digest);
  h.field(join(tc_.link_flags, " "));
  h.field(join(task.allowed_libraries, ","));
  return h.hex_digest();
}

compiler::handle compiler::start(const task_spec& task, build_request req,
                                 std::function<void(build_result)> done) {
  auto h = std::make_shared<job>();
  h->req = std::move(req);
  h->task = task;
  h->done = std::move(done);
  h->t0 = std::chrono::steady_clock::now();
  h->key = cache_key(task, h->req);
  h->display_name = h->req.reference ? "reference.cu" : "solution.cu";
  if (h->req.backend == backend::cuda && tc_.harness_cuda_lib.empty()) {
    build_result r;
    r.st = build_status::internal_error;
    r.stage = "request";
    r.diagnostics = "the CUDA harness was not built (no CUDA toolkit headers at build time)";
    r.key = h->key;
    finish(h, std::move(r));
    return h;
  }
  begin(h);
  return h;
}

void compiler::begin(const handle& h) {
  auto fail = [&](build_status st, std::string stage, std::string diag) {
    build_result r;
    r.st = st;
    r.stage = std::move(stage);
    r.diagnostics = std::move(diag);
    r.key = h->key;
    finish(h, std::move(r));
  };
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lk(h->mtx);
    cancelled = h->cancelled;
  }
  if (cancelled)
    return fail(build_status::cancelled, "", "");
  // One builder per key: another job (here or in another leap process sharing the cache) holds
  // it, so wait until it lets go, then look again (most likely a hit).
  auto held = cache_->try_lock(h->key);
  if (!held)
    return fail(build_status::internal_error, "cache", held.message());
  if (!*held && flock_tool_.empty()) {
    auto l = cache_->lock(h->key); // no waiter program: block this thread (never the runner's
                                   // thread that the holder needs: begin runs there only after
                                   // a waiter, and waiters exist only with the program)
    if (!l)
      return fail(build_status::internal_error, "cache", l.message());
    held = std::optional<build_cache::key_lock>(std::move(*l));
  }
  if (!*held) {
    process_spec spec;
    spec.argv = {flock_tool_, cache_->lock_file(h->key), "true"};
    spec.timeout_seconds = opts_.timeout_seconds;
    std::lock_guard<std::mutex> lk(h->mtx); // as in next_step: start() never calls back inline
    h->current = runner_.start(spec, [this, h](process_outcome o) {
      if (o.cancelled) {
        build_result r;
        r.st = build_status::cancelled;
        r.key = h->key;
        finish(h, std::move(r));
        return;
      }
      if (!o.started) {
        build_result r;
        r.st = build_status::internal_error;
        r.stage = "cache";
        r.diagnostics = "cannot wait for the build cache's lock: " + o.describe();
        r.key = h->key;
        finish(h, std::move(r));
        return;
      }
      begin(h); // the holder let go (or the wait ended otherwise): look again
    });
    return;
  }
  h->lock = std::move(*held);
  auto found = cache_->lookup(*h->lock, h->key);
  if (found.what == build_cache::found::damaged && !found.no_manifest)
    std::fprintf(stderr, "leap: build cache: %s; removed, building it again\n",
                 found.problem.c_str());
  if (found.what == build_cache::found::damaged && found.no_manifest
      && !told_unverified_.exchange(true)) // one line, not one per build of an older cache
    std::fprintf(stderr, "leap: build cache: builds without a manifest.json (written by a leap "
                         "before builds were checksummed, or torn) are removed and built again, "
                         "e.g. %s\n", cache_->entry_dir(h->key).c_str());
  if (found.what == build_cache::found::hit) {
    const auto& j = found.record;
    build_result r;
    auto text = [&](const char* k) {
      return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
    };
    if (parse_build_status(text("status"), r.st)) { // else: rebuilt, and replaced on publish
      r.diagnostics = text("diagnostics");
      r.stage = text("stage");
      r.key = h->key;
      r.cached = true;
      r.executable = r.st == build_status::ok ? build_executable(opts_.cache_dir, h->key) : "";
      finish(h, std::move(r));
      return;
    }
  }
  if (!h->req.reference) {
    auto g = static_check(h->req.source, h->task.allowed_libraries);
    if (!g.ok)
      return fail(build_status::rejected, "guards", g.reason);
  }
  auto dir = make_temp_dir(opts_.work_dir, "build-");
  if (!dir)
    return fail(build_status::internal_error, "setup", dir.message());
  h->dir = *dir;
  auto src_path = h->dir + "/" + h->display_name;
  auto w1 = write_file_atomic(src_path, h->req.source + signature_check_suffix(h->task));
  auto w2 = write_file_atomic(h->dir + "/glue.cpp", make_glue_source(h->task));
  if (!w1 || !w2)
    return fail(build_status::internal_error, "setup", !w1 ? w1.message() : w2.message());
  prepare_steps(h);
  next_step(h);
}

namespace {

std::vector<std::string> nvcc_command(const toolchain& tc, const compiler_options& opts,
                                      const std::string& mode, const std::string& out,
                                      const std::string& display_name,
                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{tc.nvcc, mode, "-arch=" + opts.arch};
  for (auto& f : opts.nvcc_flags)
    argv.push_back(f);
  argv.insert(argv.end(), extra.begin(), extra.end());
  // --time: nvcc's own seconds per phase, to split its wall time into stages (not a cache-key
  // input: it changes no output).
  argv.insert(argv.end(), {"--time", nvcc_time_table_name, "-o", out, display_name});
  return argv;
}

std::vector<std::string> glue_command(const toolchain& tc) {
  return {tc.host_cxx, "-c", "-O2", "-std=c++17", "-o", "glue.o", "glue.cpp"};
}

} // namespace

cpu_build_commands cpu_build_command_lines(const toolchain& tc, const compiler_options& opts,
                                           const std::string& display_name) {
  cpu_build_commands c;
  // nvcc's front end checks host and device code: the truth for compile_error; ptxas still runs,
  // so its errors (e.g. too much static shared memory) stay in the truth.
  c.nvcc = nvcc_command(tc, opts, "-cubin", "solution.cubin", display_name, cpu_syntax_check_flags);
  c.emu_build = {tc.host_cxx, "-c", "-std=c++17", "-fstack-clash-protection"};
  // The precompiled shim headers, when built for these flags: g++ takes the matching one from
  // <pch>/cuda_runtime.h.gch/ and otherwise reads the header from the include dir below.
  if (!tc.emu_pch_dir.empty() && join(opts.emu_flags, " ") == tc.emu_pch_flags)
    c.emu_build.push_back("-I" + tc.emu_pch_dir);
  c.emu_build.push_back("-I" + tc.emu_include_dir);
  for (auto& f : opts.emu_flags)
    c.emu_build.push_back(f);
  c.emu_build.insert(c.emu_build.end(), {"-o", "solution_emu.o", "solution_emu.cpp"});
  c.glue = glue_command(tc);
  c.link = {tc.host_cxx};
  c.link.insert(c.link.end(), tc.link_flags.begin(), tc.link_flags.end());
  c.link.insert(c.link.end(), {"-o", "worker", "solution_emu.o", "glue.o", tc.harness_cpu_lib,
                               tc.emu_runtime_lib, "-lboost_context", "-pthread"});
  return c;
}

namespace {

// The task's glue object, compiled once and reused by every build of the task (its source
// depends on the task's signature alone): <cache_dir>/glue/<key>.o with <key>.sha256 beside it.
// An object whose checksum does not match is compiled again, never linked; publishing is best
// effort (temporary file + rename), a failure only costs the next build a glue compile.
step glue_step(const toolchain& tc, const std::string& cache_dir, const std::string& glue_source,
               const std::string& dir, std::vector<step>& after) {
  step compile{"glue", build_status::internal_error, glue_command(tc), {}, compile_stage::glue, ""};
  if (cache_dir.empty())
    return compile;
  sha256 k;
  k.field("leap-glue-v1").field(glue_source).field(join(glue_command(tc), " "));
  k.field(tc.host_cxx_version);
  auto base = cache_dir + "/glue/" + k.hex_digest();
  auto object = read_file(base + ".o");
  auto sum = read_file(base + ".sha256");
  if (object && sum && sha256_hex(*object) == *sum) {
    auto bytes = std::make_shared<std::string>(std::move(*object));
    return {"glue", build_status::internal_error, {},
            [dir, bytes]() -> result<void> { return write_file_atomic(dir + "/glue.o", *bytes); },
            compile_stage::glue, ""};
  }
  after.push_back({"glue", build_status::internal_error, {},
                   [dir, base]() -> result<void> {
                     auto built = read_file(dir + "/glue.o");
                     std::error_code ec;
                     fs::create_directories(fs::path(base).parent_path(), ec);
                     if (built && write_file_atomic(base + ".o", *built))
                       (void)write_file_atomic(base + ".sha256", sha256_hex(*built));
                     return {};
                   },
                   compile_stage::glue, ""});
  return compile;
}

} // namespace

void compiler::prepare_steps(const handle& h) {
  std::vector<step> publish_glue;
  step glue = glue_step(tc_, opts_.cache_dir, make_glue_source(h->task), h->dir, publish_glue);
  if (h->req.backend == backend::cuda) {
    h->steps.push_back({"nvcc", build_status::compile_error,
                        nvcc_command(tc_, opts_, "-c", "solution.o", h->display_name), {},
                        compile_stage::front_end, nvcc_time_table_name});
    h->steps.push_back(glue);
    h->steps.insert(h->steps.end(), publish_glue.begin(), publish_glue.end());
    h->steps.push_back({"link", build_status::compile_error,
                        {tc_.nvcc, "-arch=" + opts_.arch, "-o", "worker", "solution.o", "glue.o",
                         tc_.harness_cuda_lib},
                        {}, compile_stage::link, ""});
  } else {
    auto cmd = cpu_build_command_lines(tc_, opts_, h->display_name);
    h->steps.push_back({"nvcc", build_status::compile_error, cmd.nvcc, {}, compile_stage::front_end,
                        nvcc_time_table_name});
    std::string display = h->display_name, d = h->dir;
    // The rewrite fails on code the emulation cannot run (not the candidate's fault); writing its
    // output fails only inside leap.
    auto rewritten = std::make_shared<std::string>();
    h->steps.push_back({"rewrite", build_status::emulation_unsupported, {},
                        [display, rewritten, src = h->req.source]() -> result<void> {
                          auto rw = leap::emu::rewrite_cuda_source(src, display);
                          if (!rw.ok)
                            return make_error("the CPU emulation cannot run this code: " + rw.error);
                          *rewritten = std::move(rw.code);
                          return {};
                        }, compile_stage::rewrite, ""});
    h->steps.push_back({"rewrite", build_status::internal_error, {},
                        [d, rewritten]() -> result<void> {
                          return write_file_atomic(d + "/solution_emu.cpp", *rewritten);
                        }, compile_stage::rewrite, ""});
    h->steps.push_back({"g++", build_status::emulation_unsupported, cmd.emu_build, {},
                        compile_stage::host_build, ""});
    h->steps.push_back(glue);
    h->steps.insert(h->steps.end(), publish_glue.begin(), publish_glue.end());
    h->steps.push_back({"link", build_status::compile_error, cmd.link, {}, compile_stage::link, ""});
  }
}

namespace {

// A compiler stage that died by a signal is no verdict on the code: an operator or the OOM
// killer stopped it (leap's own kills are cancellations and timeouts, reported as such). nvcc
// runs its sub-tools (cicc, ptxas, ...) through a shell and exits 128 + the signal ("Killed",
// 137) when one is killed, or reports "'cicc' died due to signal 9"; g++ reports its killed
// cc1plus ("signal terminated program cc1plus") and collect2 its killed linker ("ld terminated
// with signal 9"). Seen with nvcc 13.0 and g++ 12.
bool killed_by_signal(const process_outcome& o) {
  if (o.signaled)
    return true;
  if (o.exit_code > 128 && o.exit_code <= 128 + 64)
    return true;
  for (const auto* text : {&o.out, &o.err})
    for (const char* mark : {"died due to signal", "signal terminated program",
                             "terminated with signal"})
      if (text->find(mark) != std::string::npos)
        return true;
  return false;
}

// Adds a finished step's wall seconds to its stage; nvcc's share of device and host work, from
// its --time table, moves out of the front end.
void add_step_seconds(compile_stage_seconds& stages, const step& s, double seconds,
                      const std::string& dir) {
  if (stages.empty())
    stages.assign(compile_stage_count, 0.0);
  double rest = seconds;
  if (!s.nvcc_time_table.empty())
    if (auto table = read_file(dir + "/" + s.nvcc_time_table)) {
      auto split = parse_nvcc_time_table(*table);
      double device = std::min(split.device_compile, rest);
      double host = std::min(split.host_build, rest - device);
      stages[static_cast<std::size_t>(compile_stage::device_compile)] += device;
      stages[static_cast<std::size_t>(compile_stage::host_build)] += host;
      rest -= device + host;
    }
  stages[static_cast<std::size_t>(s.timing)] += rest;
}

// The build's stages once it ends after `total` seconds: the time outside every step is `other`.
compile_stage_seconds close_stages(compile_stage_seconds stages, double total) {
  if (stages.empty())
    return stages;
  double inside = 0;
  for (std::size_t i = 0; i < stages.size(); ++i)
    if (i != static_cast<std::size_t>(compile_stage::other))
      inside += stages[i];
  stages[static_cast<std::size_t>(compile_stage::other)] = std::max(0.0, total - inside);
  return stages;
}

} // namespace

void compiler::next_step(const handle& h) {
  // The result of a build that ends now: its key, its wall seconds and their stages.
  auto ended = [h] {
    build_result r;
    r.key = h->key;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - h->t0).count();
    r.stages = close_stages(h->stages, r.seconds);
    return r;
  };
  std::unique_lock<std::mutex> lk(h->mtx);
  if (h->cancelled) {
    lk.unlock();
    build_result r;
    r.st = build_status::cancelled;
    r.key = h->key;
    finish(h, std::move(r));
    return;
  }
  if (h->next == h->steps.size()) {
    lk.unlock();
    // Publish into the cache (env/build_cache: a verified entry renamed into place).
    build_result r = ended();
    nlohmann::json rec{{"status", "ok"}, {"diagnostics", ""}, {"stage", ""}, {"seconds", r.seconds}};
    auto w = cache_->publish(*h->lock, h->key, rec, h->dir + "/worker");
    if (!w) {
      r.st = build_status::internal_error;
      r.stage = "cache";
      r.diagnostics = w.message();
    } else {
      r.st = build_status::ok;
      r.executable = build_executable(opts_.cache_dir, h->key);
    }
    finish(h, std::move(r));
    return;
  }
  step& s = h->steps[h->next++];
  if (s.in_process) {
    lk.unlock();
    auto t_step = std::chrono::steady_clock::now();
    auto done = s.in_process();
    add_step_seconds(h->stages, s,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t_step).count(),
                     h->dir);
    if (!done) {
      build_result r = ended();
      r.st = s.fail_status;
      r.stage = s.stage;
      r.diagnostics = done.message();
      finish(h, std::move(r));
      return;
    }
    next_step(h);
    return;
  }
  process_spec spec;
  spec.argv = s.argv;
  spec.cwd = h->dir;
  spec.timeout_seconds = opts_.timeout_seconds;
  spec.output_limit = 256 * 1024;
  auto stage = s.stage;
  auto fail_status = s.fail_status;
  std::size_t index = h->next - 1;
  h->current = runner_.start(spec, [this, h, stage, fail_status, index, ended](process_outcome o) {
    if (o.started && !o.cancelled)
      add_step_seconds(h->stages, h->steps[index], o.seconds, h->dir);
    if (o.success()) {
      next_step(h);
      return;
    }
    build_result r = ended();
    r.stage = stage;
    if (o.cancelled) {
      r.st = build_status::cancelled;
    } else if (o.timed_out) {
      r.st = build_status::timeout;
      r.diagnostics = stage + " " + o.describe();
    } else if (!o.started) {
      r.st = build_status::internal_error;
      r.diagnostics = stage + ": " + o.describe();
    } else if (killed_by_signal(o)) {
      r.st = build_status::internal_error;
      auto text = clean_diagnostics(o.out + o.err, h->dir, opts_.max_diagnostic_lines);
      std::string what = o.signaled ? o.describe()
                         : o.exit_code > 128
                           ? "exited with " + std::to_string(o.exit_code) + " (a sub-process killed by "
                               + signal_description(o.exit_code - 128) + ")"
                           : "lost a sub-process to a signal";
      r.diagnostics = "infrastructure: " + stage + " " + what + (text.empty() ? "" : "\n" + text);
    } else {
      r.st = fail_status;
      auto text = clean_diagnostics(o.out + o.err, h->dir, opts_.max_diagnostic_lines);
      if (fail_status == build_status::emulation_unsupported)
        text = "nvcc accepted the code but the CPU emulation could not build it (" + stage
               + "):\n" + text;
      r.diagnostics = text;
    }
    finish(h, std::move(r));
  });
}

void compiler::cancel(const handle& h) {
  if (!h)
    return;
  process_runner::handle cur;
  {
    std::lock_guard<std::mutex> lk(h->mtx);
    h->cancelled = true;
    cur = h->current;
  }
  runner_.cancel(cur);
}

void compiler::finish(const handle& h, build_result r) {
  std::function<void(build_result)> done;
  {
    std::lock_guard<std::mutex> lk(h->mtx);
    if (h->finished)
      return;
    h->finished = true;
    done = std::move(h->done);
  }
  // Deterministic failures are cached too: the same source fails the same way.
  bool cacheable = r.st == build_status::compile_error || r.st == build_status::rejected
                   || r.st == build_status::emulation_unsupported;
  if (cacheable && !r.cached && h->lock) {
    nlohmann::json rec{{"status", to_string(r.st)}, {"diagnostics", r.diagnostics},
                       {"stage", r.stage}, {"seconds", r.seconds}};
    if (auto w = cache_->publish(*h->lock, r.key, rec, ""); !w)
      std::fprintf(stderr, "leap: %s (the verdict stands, uncached)\n", w.message().c_str());
  }
  h->lock.reset(); // the next job of this key may look now
  if (!h->dir.empty() && std::getenv("LEAP_KEEP_WORK") == nullptr) {
    std::error_code ec;
    fs::remove_all(h->dir, ec);
  }
  if (done)
    done(std::move(r));
}

} // namespace leap::env
