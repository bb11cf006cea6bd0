#include "env/feedback.hpp"

#include "common/strings.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace leap::env {

std::string clean_diagnostics(std::string_view raw, const std::string& work_dir, int max_lines) {
  std::string text(raw);
  if (!work_dir.empty()) {
    text = replace_all(text, work_dir + "/", "");
    text = replace_all(text, work_dir, ".");
  }
  auto lines = split_lines(text);
  std::vector<std::string> kept;
  std::size_t first_error = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("error") != std::string::npos) {
      first_error = i;
      break;
    }
  }
  if (first_error == lines.size())
    first_error = 0;
  for (std::size_t i = first_error; i < lines.size(); ++i) {
    const auto& l = lines[i];
    if (trim(l).empty())
      continue;
    if (l.find("Compilation terminated") != std::string::npos
        || l.find("errors detected in the compilation") != std::string::npos
        || l.find("error detected in the compilation") != std::string::npos
        || starts_with(l, "Remark: The warnings can be suppressed"))
      continue;
    kept.push_back(l);
    if (static_cast<int>(kept.size()) >= max_lines) {
      kept.push_back("...");
      break;
    }
  }
  return join(kept, "\n");
}

std::string describe_size_set(const task_spec& task, int s) {
  if (s < 0 || s >= static_cast<int>(task.sizes.size()))
    return "";
  std::string out;
  for (auto& a : task.args)
    if (!a.p.is_pointer)
      out += (out.empty() ? "" : ", ") + a.p.name + "=" + std::to_string(task.sizes[s].at(a.p.name));
  return out;
}

namespace {
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
} // namespace

std::string make_feedback(const verdict& v, const task_spec& task) {
  std::ostringstream os;
  switch (v.st) {
    case status::correct:
      os << "correct on all " << v.trials_run << " trials (max abs error " << num(v.max_abs_error)
         << ")";
      if (v.timed)
        os << "; time " << num(v.candidate_ms) << " ms vs reference " << num(v.reference_ms)
           << " ms, speedup " << num(v.speedup) << "x";
      else if (v.backend == backend::cpu)
        os << "; checked on the CPU emulation, which measures correctness only (no timing)";
      break;
    case status::wrong_answer: {
      if (v.reason == "timed_mismatch") {
        os << "correct in the checked trials, but wrong in the timing runs (" << v.diagnostics;
        if (!v.mismatch_output.empty())
          os << ": output " << v.mismatch_output << ", index " << v.mismatch_index << ", expected "
             << num(v.expected) << ", got "
             << (std::isnan(v.actual) ? std::string("NaN, i.e. not written") : num(v.actual));
        os << "): every call gets new inputs in the same buffers and must compute its outputs "
           << "from them; replaying an earlier result or caching by input is a wrong answer";
        break;
      }
      if (v.reason == "inconsistent") {
        os << "results changed between two calls on identical inputs (output " << v.mismatch_output
           << ", index " << v.mismatch_index << ": " << num(v.expected) << " then "
           << num(v.actual) << "): solution() must compute its outputs from its inputs on every "
           << "call, without state kept across calls";
        break;
      }
      os << "wrong result for output " << v.mismatch_output << " (size set "
         << describe_size_set(task, v.mismatch_size_set) << "): ";
      bool nan = std::isnan(v.actual);
      os << "first mismatch at index " << v.mismatch_index << " (expected " << num(v.expected)
         << ", got " << (nan ? std::string("NaN, i.e. not written?") : num(v.actual)) << ")";
      long long total = 0;
      for (std::size_t i = 0; i < task.args.size(); ++i)
        if (task.args[i].p.name == v.mismatch_output && v.mismatch_size_set >= 0)
          total = task.elements(i, task.sizes[v.mismatch_size_set]);
      os << "; " << v.mismatches << " of " << total << " elements beyond tolerance (atol "
         << num(task.atol) << ", rtol " << num(task.rtol) << ")";
      if (std::isfinite(v.max_abs_error))
        os << "; max abs error " << num(v.max_abs_error);
      if (v.reason == "undefined_behaviour")
        os << "; the CPU emulation saw undefined behaviour, which a GPU may answer differently: "
           << v.diagnostics;
      break;
    }
    case status::runtime_error:
      os << "runtime error: " << v.diagnostics;
      break;
    case status::timeout:
      os << "timeout: " << v.diagnostics;
      break;
    case status::compile_error:
      os << "compile error:\n" << v.diagnostics;
      break;
    case status::rejected:
      os << "rejected: " << v.diagnostics;
      break;
  }
  if ((v.st == status::correct || v.st == status::wrong_answer)
      && (","+ v.flags + ",").find(",implicit_warp_sync,") != std::string::npos)
    os << "\nnote: the kernel relies on implicit warp synchronisation (lanes of a warp exchanging "
          "data through volatile shared memory without __syncwarp), a race since Volta; put "
          "__syncwarp() between the steps or reduce in registers with __shfl_down_sync";
  if (v.st == status::correct && (","+ v.flags + ",").find(",undefined_behaviour,") != std::string::npos)
    os << "\nnote: the CPU emulation saw undefined behaviour (a shuffle reading a lane outside its "
          "mask or an exited lane); the result may differ on a GPU";
  return os.str();
}

} // namespace leap::env
