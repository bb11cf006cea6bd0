// Independent LibTorch oracles for the bundled task suite (tasks/<name>/).
// `leap tasks verify` runs each task's reference kernel and compares its outputs with what the
// oracle computes from the same inputs, so a wrong reference is caught before it grades a model.
// Any thread may call these functions; they share no state. LibTorch stays out of this header.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace leap::oracles {

// One pointer argument's data: int32 in i32 when is_int, float32 in f32 otherwise.
struct oracle_buffer {
  bool is_int = false;
  std::vector<float> f32;
  std::vector<std::int32_t> i32;
};

struct oracle_case {
  // int (size) arguments by name
  std::map<std::string, long long> ints;
  // pointer args with role input or inout: their initial contents
  std::map<std::string, oracle_buffer> inputs;
  // pointer args with role output or inout: pre-sized by the caller; the oracle fills them
  std::map<std::string, oracle_buffer> outputs;
};

// True when run_oracle knows `task_name`.
bool has_oracle(std::string_view task_name);

// The names of all tasks with an oracle, sorted.
std::vector<std::string> oracle_names();

// Computes the outputs of `task_name` from the inputs with LibTorch ops (in float64, then rounded
// to float32), independently of the reference kernel. Errors (unknown task, missing int or
// buffer, wrong buffer type or size) come back as values, never as exceptions.
leap::result<void> run_oracle(std::string_view task_name, oracle_case& c);

} // namespace leap::oracles
