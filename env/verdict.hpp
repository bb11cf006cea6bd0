// The verdict of one attempt (docs/design.md "Verdict"): status, error measures, diagnostics,
// timing, costs and the normalised feedback text the model sees on its next turn.
// Plain value type, serialisable by messages/ (inspect) and printable as JSON.
#pragma once

#include "env/backend.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace leap::env {

enum class status : std::uint8_t { correct = 0, wrong_answer, runtime_error, timeout, compile_error, rejected };

const char* to_string(status s);
bool parse_status(const std::string& text, status& out);
// compile_error, runtime_error, timeout and rejected are catastrophic (docs/design.md "Verdict").
inline bool catastrophic(status s) {
  return s == status::compile_error || s == status::runtime_error || s == status::timeout
         || s == status::rejected;
}

struct verdict {
  std::string task;
  env::backend backend = env::backend::cpu;
  status st = status::rejected;
  std::string reason;           // short cause: "canary", "SIGSEGV", "deadlock", "emulation_unsupported",
                                 // "misaligned_address", "undefined_behaviour" (CPU emulation), ...
  // Correctness (wrong_answer and correct).
  double max_abs_error = 0;
  double max_rel_error = 0;
  long long mismatch_index = -1; // first element beyond tolerance, -1 if none
  std::string mismatch_output;   // name of that output
  int mismatch_size_set = -1;
  double expected = 0, actual = 0;
  long long mismatches = 0;      // elements beyond tolerance in the failing output
  int trials_run = 0;
  int trials_passed = 0;
  // Compiler and runtime text, temporary paths replaced by "solution.cu".
  std::string diagnostics;
  // Timing (CUDA backend only; timed = false on the CPU emulation).
  bool timed = false;
  double candidate_ms = 0, reference_ms = 0, speedup = 0;
  // Costs.
  double compile_seconds = 0;
  // The candidate's compile_seconds per stage, indexed by env::compile_stage
  // (env/compile_stages.hpp); empty on a cache hit. Reported only, never part of a verdict
  // comparison.
  std::vector<double> compile_stages;
  double run_seconds = 0;
  bool cached = false;           // the compile was a cache hit
  bool emulation_unsupported = false; // nvcc accepted it, the CPU emulation could not build it
  std::string flags;             // comma-separated review flags: excessive_speedup, inconsistent_across_calls,
                                 // implicit_warp_sync, undefined_behaviour (the last two from the CPU emulation)
  std::string feedback;          // the short text for the next turn's prompt
};

// One JSON object on one line (keys: status, max_abs_error, feedback, compile_seconds,
// run_seconds, cached, backend, and the rest of the fields; compile_stages is an object of
// stage name -> seconds, {} on a cache hit).
std::string to_json(const verdict& v);

} // namespace leap::env
