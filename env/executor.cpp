#include "env/executor.hpp"

#include "common/fs.hpp"
#include "env/compare.hpp"
#include "env/executor_job.hpp"
#include "env/glue.hpp"
#include "env/harness/protocol.hpp"

#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>

namespace fs = std::filesystem;

namespace leap::env {

using executor_detail::first_size_set;
using executor_detail::killed_from_outside;
using executor_detail::parse_status_file;

namespace executor_detail {

bool killed_from_outside(const process_outcome& o) {
  return o.signaled && o.term_signal == SIGKILL && !o.timed_out && !o.cancelled;
}

task_spec first_size_set(const task_spec& task) {
  task_spec first = task;
  first.sizes = {task.sizes[0]};
  return first;
}

} // namespace executor_detail

namespace {

// Copies an executable with close-on-exec descriptors (fallback when a hard link is impossible).
result<void> copy_executable(const std::string& from, const std::string& to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return make_error(from + ": " + std::strerror(errno));
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (out < 0) {
    ::close(in);
    return make_error(to + ": " + std::strerror(errno));
  }
  char buf[1 << 16];
  bool ok = true;
  for (;;) {
    auto n = ::read(in, buf, sizeof buf);
    if (n == 0)
      break;
    if (n < 0 || ::write(out, buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
  }
  ::close(in);
  ok = ::close(out) == 0 && ok;
  if (!ok)
    return make_error(to + ": copy failed");
  return {};
}

} // namespace

// The timing loop runs on both backends: on a GPU it measures, on the emulation (host clock,
// never a speedup) it still checks every timed call's outputs, so a candidate that replays or
// caches results fails the same way on both. The emulation gets a short loop: no warm-up (it
// times nothing) and two checked calls on the same buffers, the second of which a kernel that
// replays its last result by pointer gets wrong.
int executor::warmup_calls(backend b) const {
  return b == backend::cuda ? opts_.warmup : 0;
}
int executor::timed_calls(backend b) const {
  return b == backend::cuda ? opts_.timing_runs : std::min(opts_.timing_runs, 2);
}

executor::executor(executor_options opts, process_runner& runner)
  : opts_(std::move(opts)), runner_(runner) {
  // The unprivileged worker uid must be able to reach its run directory.
  if (opts_.sandbox && opts_.caps.drop_uid)
    ::chmod(opts_.work_dir.c_str(), 0711);
}

executor::handle executor::start(const task_spec& task, run_request req,
                                 std::function<void(result<run_result>)> done) {
  auto h = std::make_shared<job>();
  h->task = task;
  h->req = std::move(req);
  h->set_done(std::move(done));
  h->t0 = std::chrono::steady_clock::now();
  h->seed = opts_.seed != 0 ? opts_.seed : (os_random_u64() | 1ull);
  h->job_text = make_job_text(task, h->seed, opts_.trials, true, h->req.dump_inputs,
                              warmup_calls(h->req.backend), timed_calls(h->req.backend),
                              opts_.l2_flush_mb, opts_.check_repeat);
  run_one(h, false);
  return h;
}

void executor::cancel(const handle& h) {
  if (h)
    h->cancel(runner_);
}

void executor::run_one(const handle& h, bool reference) {
  auto fail = [&](const std::string& msg) {
    auto done = h->take_done();
    if (!done)
      return;
    std::error_code ec;
    for (auto* d : {&h->cand_dir, &h->ref_dir})
      if (!d->empty())
        fs::remove_all(*d, ec);
    done(make_error(msg));
  };
  auto dir = make_temp_dir(opts_.work_dir, reference ? "ref-" : "run-");
  if (!dir)
    return fail(dir.message());
  (reference ? h->ref_dir : h->cand_dir) = *dir;
  auto w = write_file_atomic(*dir + "/" + harness::job_file, h->job_text);
  if (!w)
    return fail(w.message());
  process_spec spec;
  spec.argv = {reference ? h->req.reference_exe : h->req.candidate_exe};
  if (opts_.sandbox) {
    // The worker runs from inside its own directory (the cache may not be reachable by the
    // sandbox uid, and Landlock allows execution only there and in system directories).
    // A hard link, not a copy: a copy's write descriptor, inherited by a concurrently forked
    // child, would make exec fail with ETXTBSY.
    std::error_code ec;
    auto local = *dir + "/worker";
    fs::create_hard_link(spec.argv[0], local, ec);
    if (ec) {
      auto copied = copy_executable(spec.argv[0], local);
      if (!copied)
        return fail("cannot place the worker in its run directory: " + copied.message());
    }
    if (opts_.caps.drop_uid && ::chown(dir->c_str(), sandbox_uid, sandbox_gid) != 0)
      return fail("cannot hand the run directory to the sandbox uid");
    spec.argv = {local};
    spec.sandbox = std::make_shared<sandbox_plan>(make_plan(opts_.caps, *dir, h->req.backend == backend::cuda));
  }
  spec.cwd = *dir;
  spec.clean_env = true;
  spec.env = {"PATH=/usr/bin:/bin", "HOME=" + *dir, "TMPDIR=" + *dir, "LANG=C",
              "LEAP_EMU_THREADS=" + std::to_string(opts_.emu_threads),
              "LEAP_EMU_STACK_KB=" + std::to_string(opts_.emu_stack_kb),
              // Emulated device memory fails cleanly (cudaErrorMemoryAllocation) well before
              // the address-space limit ends the process.
              "LEAP_EMU_MEM_LIMIT_MB=" + std::to_string(std::max(16ll, opts_.memory_limit_mb / 2))};
  if (h->req.backend == backend::cuda) {
    spec.env.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(opts_.cuda_device));
  } else {
    spec.address_space_bytes = opts_.memory_limit_mb << 20;
  }
  // Room for the outputs (and inputs when dumped) of every trial, and little else.
  auto out_bytes = static_cast<long long>(outputs_bytes(h->task, opts_.trials));
  auto timed_bytes = static_cast<long long>(
    outputs_bytes(first_size_set(h->task), std::max(0, timed_calls(h->req.backend))));
  spec.file_size_bytes = 3 * out_bytes + timed_bytes + (64ll << 20);
  spec.open_files = 256;
  // CPU time: every emulation thread busy for the whole wall-clock budget, plus start-up.
  spec.cpu_seconds = static_cast<long long>(opts_.timeout_seconds * std::max(1, opts_.emu_threads)) + 5;
  spec.timeout_seconds = opts_.timeout_seconds;
  spec.output_limit = opts_.output_limit;
  spec.output_hard_limit = 16u << 20;
  bool started = h->start(runner_, spec, [this, h, reference](process_outcome o) {
    // A candidate killed from outside is run once more: a kill that is not its doing must not
    // become its verdict. A second one is (reason "killed").
    if (!reference && killed_from_outside(o) && h->foreign_kills++ == 0) {
      std::error_code ec;
      fs::remove_all(h->cand_dir, ec);
      h->cand_dir.clear();
      run_one(h, false);
      return;
    }
    (reference ? h->ref : h->cand) = std::move(o);
    if (!reference) {
      // Run the reference only when the candidate produced outputs to compare.
      auto st = read_file(h->cand_dir + "/" + harness::status_file);
      auto si = parse_status_file(st ? *st : "");
      if (h->cand.success() && si.done && !si.failed && !h->cand.cancelled) {
        run_one(h, true);
        return;
      }
    }
    conclude(h);
  });
  if (!started) {  // cancelled before this run began
    h->cand.cancelled = true;
    std::error_code ec;
    fs::remove_all(*dir, ec);
    auto done = h->take_done();
    if (!done)
      return;
    run_result rr;
    rr.v.task = h->task.name;
    rr.v.backend = h->req.backend;
    rr.v.st = status::runtime_error;
    rr.v.reason = "cancelled";
    rr.v.diagnostics = "cancelled before it ran";
    done(std::move(rr));
  }
}

} // namespace leap::env
