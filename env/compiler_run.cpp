#include "env/compiler_job.hpp"

#include "common/fs.hpp"
#include "env/feedback.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace leap::env {

using compiler_detail::step;

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
  auto finish_cancelled = [this, &h] {
    build_result r;
    r.st = build_status::cancelled;
    r.key = h->key;
    finish(h, std::move(r));
  };
  if (h->cancelled()) {
    finish_cancelled();
    return;
  }
  if (h->next == h->steps.size()) {
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
  bool started = h->start(runner_, spec, [this, h, stage, fail_status, index, ended](process_outcome o) {
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
  if (!started)
    finish_cancelled();  // cancelled since the check above
}

} // namespace leap::env
