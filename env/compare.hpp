// Comparison of a candidate's raw outputs with the reference's, inside leap's own process (the
// candidate never sees reference outputs and cannot fake the comparison). The functions are pure
// and thread-safe; an output_source belongs to one thread at a time.
#pragma once

#include "common/result.hpp"
#include "env/task.hpp"

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace leap::env {

struct comparison {
  bool ok = false;
  std::optional<std::string> malformed; // the output files are malformed or short: why
  double max_abs = 0, max_rel = 0;
  long long first_index = -1; // in the first failing output
  std::string output;         // its name
  int size_set = -1, trial = -1;
  double expected = 0, actual = 0;
  long long mismatches = 0;   // beyond tolerance, in that output of that trial
  int trials_compared = 0, trials_passed = 0;
};

// The bytes of an outputs buffer, read front to back: a view of memory, or a file read in pieces
// of at most `piece_bytes`, so that comparing the outputs of a run (tens of MB per job, the
// reference's and the candidate's) never puts them whole on leap's heap. A file that turns out
// shorter than it was when opened (something truncated it) ends the source early, never a crash.
class output_source {
public:
  static constexpr std::size_t piece_bytes = 256 * 1024;

  static output_source of(std::string_view bytes);
  // The file at `path`, at most its first `limit` bytes; an error naming the path if it cannot be
  // opened.
  static result<output_source> open(const std::string& path,
                                    std::size_t limit = static_cast<std::size_t>(-1));

  // Bytes this source holds (for a file: its size when opened, at most `limit`).
  std::size_t size() const { return size_; }
  // The next n bytes (n <= piece_bytes), valid until the next call; nullptr past the end.
  const char* next(std::size_t n);

private:
  struct file_closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string_view view_;
  std::unique_ptr<std::FILE, file_closer> file_;
  std::vector<char> piece_;
  std::size_t size_ = 0, pos_ = 0;
};

// Both buffers hold, for each size set, each trial, each output argument in signature order,
// its elements as 32-bit values (float or int). Floats pass when |a - e| <= atol + rtol * |e|
// (NaN never passes); ints must be equal.
comparison compare_outputs(const task_spec& task, int trials, std::string_view candidate,
                           std::string_view reference);
// The same, read from two sources piece by piece (both are consumed).
comparison compare_outputs(const task_spec& task, int trials, output_source& candidate,
                           output_source& reference);

// Expected byte size of such a buffer.
std::size_t outputs_bytes(const task_spec& task, int trials);

// The degenerate answers a task's tolerance must refuse, built for the inputs of a run
// (`inputs`: laid out like the harness's inputs.bin, per size set, per trial, each input and
// inout argument in signature order) and checked against its reference outputs: every output
// all zeros, every output left as the harness's poison, and every output a copy of one input
// (its leading elements, zeros past its end). Returns what passed ("every output all zeros",
// "output 'y' a copy of input 'x'"), or nothing when each of them fails as it must.
std::optional<std::string> degenerate_answer_passes(const task_spec& task, int trials,
                                                    std::string_view inputs,
                                                    std::string_view reference);

} // namespace leap::env
