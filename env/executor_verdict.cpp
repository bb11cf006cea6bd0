#include "env/executor_job.hpp"

#include "common/fs.hpp"
#include "common/strings.hpp"
#include "env/compare.hpp"
#include "env/feedback.hpp"
#include "env/harness/protocol.hpp"

#include <csignal>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <system_error>

#include <sys/stat.h>

namespace fs = std::filesystem;

namespace leap::env {

using executor_detail::first_size_set;
using executor_detail::killed_from_outside;
using executor_detail::parse_status_file;
using executor_detail::status_info;

namespace executor_detail {

status_info parse_status_file(const std::string& text) {
  status_info si;
  for (auto& line : split_lines(text)) {
    std::istringstream is(line);
    std::string w;
    is >> w;
    if (w == "begin") {
      is >> si.cur_s >> si.cur_t;
    } else if (w == "ok") {
      ++si.trials_ok;
    } else if (w == "fail" && !si.failed) {
      si.failed = true;
      is >> si.fail_s >> si.fail_t >> si.fail_kind;
      std::getline(is, si.fail_msg);
      si.fail_msg = std::string(trim(si.fail_msg));
    } else if (w == "time") {
      int s = 0;
      is >> s >> si.median_ms;
      si.timed = static_cast<bool>(is);
    } else if (w == "note") {
      std::string what;
      is >> what;
      if (what == "implicit_warp_sync") {
        si.implicit_warp_sync = true;
      } else if (what == "undefined_behaviour") {
        std::getline(is, si.undefined);
        si.undefined = std::string(trim(si.undefined));
      }
    } else if (w == "done") {
      si.done = true;
    }
  }
  return si;
}

} // namespace executor_detail

namespace {

void add_flag(verdict& v, const char* flag) {
  v.flags = v.flags.empty() ? flag : v.flags + "," + flag;
}

// What the CPU emulation noticed: code that relies on implicit warp synchronisation, and
// undefined behaviour, which explains a wrong answer (reason undefined_behaviour) and is
// flagged either way, never silent.
void add_emulation_notes(verdict& v, const status_info& si) {
  if (si.implicit_warp_sync)
    add_flag(v, "implicit_warp_sync");
  if (si.undefined.empty())
    return;
  add_flag(v, "undefined_behaviour");
  if (v.st == status::wrong_answer) {
    v.reason = "undefined_behaviour";
    v.diagnostics = si.undefined;
  } else if (v.st == status::runtime_error) {
    v.diagnostics += "; before that: " + si.undefined;
  }
}

// Why leap read no outputs from the candidate's `file` (a name in its working directory) when
// something other than a regular file is there: the candidate replaced the harness's file during
// its call (unlinked it and left a link, a FIFO or a directory; leap opens it without following
// a link or blocking). Empty when the file is missing or regular (then the comparison's own
// diagnostics say what was wrong).
std::string replaced_file(const std::string& dir, const char* file) {
  struct stat st {};
  const std::string path = dir + "/" + file;
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
    return {};
  const char* kind = S_ISLNK(st.st_mode)    ? "a symbolic link"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                                            : "something other than a regular file";
  return std::string("the harness's ") + file + " in the candidate's working directory was replaced by " + kind
         + " during the run, so its outputs could not be read: a candidate must leave the files of its "
           "working directory alone";
}

std::string where(const task_spec& t, int s, int trial) {
  if (s < 0)
    return "";
  std::string w = " (size set " + describe_size_set(t, s);
  if (trial >= 0)
    w += ", trial " + std::to_string(trial + 1);
  else
    w += ", timing runs";
  return w + ")";
}

} // namespace

void executor::conclude(const handle& h) {
  auto done = h->take_done();
  if (!done)
    return;
  run_result rr;
  rr.seed = h->seed;
  verdict& v = rr.v;
  v.task = h->task.name;
  v.backend = h->req.backend;
  v.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - h->t0).count();
  const auto& task = h->task;
  auto cleanup = [&] {
    std::error_code ec;
    if (!h->cand_dir.empty())
      fs::remove_all(h->cand_dir, ec);
    if (!h->ref_dir.empty() && !h->req.dump_inputs)
      fs::remove_all(h->ref_dir, ec);
  };
  auto cand_status = read_file(h->cand_dir + "/" + harness::status_file);
  auto si = parse_status_file(cand_status ? *cand_status : "");
  const auto& o = h->cand;
  std::string at = where(task, si.failed ? si.fail_s : si.cur_s, si.failed ? si.fail_t : si.cur_t);
  std::string output_tail;
  if (!o.err.empty() || !o.out.empty()) {
    auto text = std::string(trim(o.err.empty() ? o.out : o.err));
    if (text.size() > 400)
      text = "..." + text.substr(text.size() - 400);
    output_tail = text;
  }
  v.trials_run = si.trials_ok + (si.failed || !si.done ? 1 : 0);
  v.trials_passed = 0;
  if (o.cancelled) {
    v.st = status::runtime_error;
    v.reason = "cancelled";
    v.diagnostics = "cancelled";
  } else if (!o.started) {
    cleanup();
    done(make_error("cannot start the worker " + h->req.candidate_exe + ": " + o.start_error));
    return;
  } else if (o.timed_out) {
    v.st = status::timeout;
    v.reason = "wall_clock";
    v.diagnostics = "did not finish within " + format_seconds(opts_.timeout_seconds) + " s" + at;
  } else if (si.failed) {
    v.st = status::runtime_error;
    v.reason = si.fail_kind;
    if (si.fail_kind == "emu_fatal" && si.fail_msg.find("barrier") != std::string::npos)
      v.reason = "deadlock";
    v.diagnostics = si.fail_msg + at;
  } else if (o.started && !o.signaled && o.exit_code == sandbox_setup_failed_exit) {
    cleanup();
    done(make_error("the candidate sandbox could not be set up: " + std::string(trim(o.err))
                    + " (set executor.sandbox = false to run without it)"));
    return;
  } else if (o.output_limit_exceeded && (o.signaled || o.exit_code != 0 || !si.done)) {
    v.st = status::runtime_error;
    v.reason = "output_limit";
    v.diagnostics = "wrote more than 16 MB to stdout/stderr" + at
                    + ": leap closed the stream and the process ended with " + o.describe();
  } else if (killed_from_outside(o)) {
    v.st = status::runtime_error;
    v.reason = "killed";
    v.diagnostics = "the process was killed by SIGKILL, which leap did not send, on both of its "
                    "runs" + at + " (the OOM killer, an operator, or the CPU-time limit)";
  } else if (o.signaled) {
    v.st = status::runtime_error;
    v.reason = "signal";
    v.diagnostics = "the process was " + o.describe() + at;
    // The emulation's fault handler words a misaligned vector access as a GPU does.
    const std::string emu_fault = "emulation: misaligned address";
    if (auto p = output_tail.find(emu_fault); p != std::string::npos) {
      v.reason = "misaligned_address";
      auto e = output_tail.find('\n', p);
      const auto from = p + std::string("emulation: ").size();
      v.diagnostics = output_tail.substr(from, e == std::string::npos ? e : e - from) + at
                      + " (the emulation's process was " + o.describe() + ")";
      output_tail.clear();
    }
    if (o.term_signal == SIGXCPU)
      v.diagnostics += ": CPU time limit exceeded";
    if (!output_tail.empty())
      v.diagnostics += "; its output ended with: " + output_tail;
  } else if (o.exit_code != 0 || !si.done) {
    v.st = status::runtime_error;
    v.reason = "early_exit";
    v.diagnostics = "the process ended with " + o.describe() + " before the harness finished" + at
                    + (output_tail.empty() ? "" : "; its output ended with: " + output_tail);
  } else {
    // Candidate finished every trial: compare against the reference.
    const auto& r = h->ref;
    auto ref_status = read_file(h->ref_dir + "/" + harness::status_file);
    auto rsi = parse_status_file(ref_status ? *ref_status : "");
    if (!r.success() || !rsi.done || rsi.failed) {
      std::string why = r.success() ? rsi.fail_kind + " " + rsi.fail_msg : r.describe();
      cleanup();
      done(make_error("the reference of task '" + task.name + "' failed (" + why
                      + "): this is a problem of the task or of leap, not of the candidate"));
      return;
    }
    // Outputs are compared as they are read, a piece at a time: a run's outputs (tens of MB for
    // the candidate and as many for the reference) never sit whole on leap's heap. A candidate
    // file that is missing compares as empty (malformed, a runtime error of the candidate).
    const std::string cand_path = h->cand_dir + "/" + harness::outputs_file;
    auto cand_src = [](const std::string& path, std::size_t limit = static_cast<std::size_t>(-1)) {
      auto s = output_source::open(path, limit);
      return s ? std::move(*s) : output_source::of({});
    };
    auto ref_out = output_source::open(h->ref_dir + "/" + harness::outputs_file);
    if (!ref_out) {
      cleanup();
      done(make_error("reference outputs missing: " + ref_out.message()));
      return;
    }
    auto cand_out = cand_src(cand_path);
    auto c = compare_outputs(task, opts_.trials, cand_out, *ref_out);
    v.trials_run = c.trials_compared;
    v.trials_passed = c.trials_passed;
    v.max_abs_error = c.max_abs;
    v.max_rel_error = c.max_rel;
    if (c.malformed) {
      v.st = status::runtime_error;
      v.reason = "outputs";
      auto replaced = replaced_file(h->cand_dir, harness::outputs_file);
      v.diagnostics = replaced.empty() ? *c.malformed : replaced;
    } else if (!c.ok) {
      v.st = status::wrong_answer;
      v.reason = "mismatch";
      v.mismatch_index = c.first_index;
      v.mismatch_output = c.output;
      v.mismatch_size_set = c.size_set;
      v.expected = c.expected;
      v.actual = c.actual;
      v.mismatches = c.mismatches;
    } else {
      v.st = status::correct;
    }
    // A second call on identical inputs must give the same results (within tolerance).
    if (opts_.check_repeat && v.st == status::correct) {
      const task_spec first = first_size_set(task);
      auto block = outputs_bytes(first, 1);
      auto rep = cand_src(h->cand_dir + "/" + harness::repeat_file);
      auto first_call = cand_src(cand_path, block);
      auto rc = compare_outputs(first, 1, rep, first_call);
      if (!rc.ok) {
        v.st = status::wrong_answer;
        v.reason = "inconsistent";
        v.flags = v.flags.empty() ? "inconsistent_across_calls" : v.flags + ",inconsistent_across_calls";
        v.mismatch_index = rc.first_index;
        v.mismatch_output = rc.output;
        v.mismatch_size_set = 0;
        v.expected = rc.expected;
        v.actual = rc.actual;
        v.mismatches = rc.mismatches;
      }
    }
    // Every timed call's outputs, computed from inputs no earlier call saw, must be right too.
    const int timed_n = timed_calls(h->req.backend);
    if (v.st == status::correct && timed_n > 0) {
      auto rt = output_source::open(h->ref_dir + "/" + harness::timed_file);
      if (!rt) {
        cleanup();
        done(make_error("the reference of task '" + task.name + "' wrote no timed outputs: "
                        + rt.message()));
        return;
      }
      auto ct = cand_src(h->cand_dir + "/" + harness::timed_file);
      auto tc = compare_outputs(first_size_set(task), timed_n, ct, *rt);
      if (!tc.ok) {
        v.st = status::wrong_answer;
        v.reason = "timed_mismatch";
        add_flag(v, "wrong_in_timed_calls");
        v.mismatch_index = tc.first_index;
        v.mismatch_output = tc.malformed ? std::string() : tc.output;
        v.mismatch_size_set = 0;
        v.expected = tc.expected;
        v.actual = tc.actual;
        v.mismatches = tc.mismatches;
        auto replaced = tc.malformed ? replaced_file(h->cand_dir, harness::timed_file) : std::string();
        v.diagnostics = !replaced.empty() ? replaced
                        : tc.malformed    ? *tc.malformed
                                          : "timed call " + std::to_string(tc.trial + 1) + " of "
                                         + std::to_string(timed_n)
                                         + " (fresh inputs, same buffers as the call before)";
      }
    }
    if (v.st == status::correct && h->req.backend == backend::cuda && si.timed && rsi.timed
        && si.median_ms > 0) {
      v.timed = true;
      v.candidate_ms = si.median_ms;
      v.reference_ms = rsi.median_ms;
      v.speedup = rsi.median_ms / si.median_ms;
      if (v.speedup > opts_.max_plausible_speedup)
        add_flag(v, "excessive_speedup");
    }
    if (h->req.dump_inputs)
      rr.kept_dir = h->ref_dir;
  }
  add_emulation_notes(v, si);
  v.feedback = make_feedback(v, task);
  cleanup();
  done(std::move(rr));
}

} // namespace leap::env
