#include "env/verdict.hpp"

#include "common/json_text.hpp"
#include "env/compile_stages.hpp"

#include <cmath>

namespace leap::env {

const char* to_string(status s) {
  switch (s) {
    case status::correct: return "correct";
    case status::wrong_answer: return "wrong_answer";
    case status::runtime_error: return "runtime_error";
    case status::timeout: return "timeout";
    case status::compile_error: return "compile_error";
    case status::rejected: return "rejected";
  }
  return "unknown";
}

const char* to_string(backend b) {
  switch (b) {
    case backend::cpu: return "cpu";
    case backend::cuda: return "cuda";
  }
  return "unknown";
}

bool parse_backend(const std::string& text, backend& out) {
  for (auto b : {backend::cpu, backend::cuda})
    if (text == to_string(b)) {
      out = b;
      return true;
    }
  return false;
}

bool parse_status(const std::string& text, status& out) {
  for (int i = 0; i <= static_cast<int>(status::rejected); ++i)
    if (text == to_string(static_cast<status>(i))) {
      out = static_cast<status>(i);
      return true;
    }
  return false;
}

namespace {
nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }
} // namespace

std::string to_json(const verdict& v) {
  nlohmann::json j;
  j["task"] = v.task;
  j["backend"] = to_string(v.backend);
  j["status"] = to_string(v.st);
  j["reason"] = v.reason;
  j["max_abs_error"] = num(v.max_abs_error);
  j["max_rel_error"] = num(v.max_rel_error);
  j["mismatch_index"] = v.mismatch_index;
  j["mismatch_output"] = v.mismatch_output;
  j["mismatch_size_set"] = v.mismatch_size_set;
  j["expected"] = num(v.expected);
  j["actual"] = num(v.actual);
  j["mismatches"] = v.mismatches;
  j["trials_run"] = v.trials_run;
  j["trials_passed"] = v.trials_passed;
  j["diagnostics"] = v.diagnostics;
  j["timed"] = v.timed;
  j["candidate_ms"] = v.timed ? num(v.candidate_ms) : nlohmann::json();
  j["reference_ms"] = v.timed ? num(v.reference_ms) : nlohmann::json();
  j["speedup"] = v.timed ? num(v.speedup) : nlohmann::json();
  j["compile_seconds"] = v.compile_seconds;
  j["compile_stages"] = nlohmann::json::object();
  for (std::size_t i = 0; i < v.compile_stages.size() && i < compile_stage_count; ++i)
    j["compile_stages"][to_string(static_cast<compile_stage>(i))] = num(v.compile_stages[i]);
  j["run_seconds"] = v.run_seconds;
  j["cached"] = v.cached;
  j["emulation_unsupported"] = v.emulation_unsupported;
  j["flags"] = v.flags;
  j["feedback"] = v.feedback;
  return dump_lossy(j);
}

} // namespace leap::env
