#include "env/compiler.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "env/compiler_job.hpp"
#include "env/glue.hpp"
#include "env/guards.hpp"

#include <nlohmann/json.hpp>

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

std::string find_flock_tool() {
  for (const char* p : {"/usr/bin/flock", "/bin/flock"})
    if (::access(p, X_OK) == 0)
      return p;
  return "";
}

} // namespace

using compiler_detail::cpu_syntax_check_flags;

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
  h->set_done(std::move(done));
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
  if (h->cancelled())
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
    bool started = h->start(runner_, spec, [this, h](process_outcome o) {
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
    if (!started)
      return fail(build_status::cancelled, "", "");
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

void compiler::cancel(const handle& h) {
  if (h)
    h->cancel(runner_);
}

void compiler::finish(const handle& h, build_result r) {
  auto done = h->take_done();
  if (!done)
    return;
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
