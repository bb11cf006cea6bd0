// The task model: one bundled or user task (tasks/<name>/task.toml + reference .cu) and the
// loader that validates it. Loading is plain file I/O; call it from the CLI or at actor start,
// never per attempt. A loaded task_spec is an immutable value, safe to share across threads.
#pragma once

#include "common/result.hpp"
#include "env/signature.hpp"

#include <map>
#include <string>
#include <vector>

namespace leap::env {

enum class arg_role { input, output, inout, size };

struct init_dist {
  enum kind_t { uniform, normal, randint, zeros, ones, constant } kind = zeros;
  double a = 0; // lo / mean / value
  double b = 0; // hi / std
};

struct task_arg {
  param p;                 // name and C type from the signature
  arg_role role = arg_role::size;
  std::string shape;       // element count expression (pointer args)
  init_dist init;          // inputs and inouts
};

using size_set = std::map<std::string, long long>;

struct task_spec {
  std::string name;
  int level = 1;
  std::string description;
  std::string signature;
  std::string spec_path;       // the task.toml
  std::string reference_path;  // absolute path of the reference .cu
  std::string reference_source;
  std::vector<std::string> allowed_libraries;
  double atol = 1e-5;
  double rtol = 1e-5;
  std::vector<task_arg> args;  // signature order
  std::vector<size_set> sizes;

  // Element count of pointer argument `arg_index` under size set `s` (validated at load).
  long long elements(std::size_t arg_index, const size_set& s) const;
  bool is_output(std::size_t arg_index) const {
    return args[arg_index].role == arg_role::output || args[arg_index].role == arg_role::inout;
  }
};

// Loads and validates one task file. Errors read "<file>:<line>:<col>: <key>: <what is wrong>".
result<task_spec> load_task(const std::string& toml_path);
// Loads every <dir>/*/task.toml, sorted by level then name. Any broken task is an error.
result<std::vector<task_spec>> load_task_suite(const std::string& dir);
// Loads <dir>/<name>/task.toml, with an error listing the known names when absent.
result<task_spec> find_task(const std::string& dir, const std::string& name);

const char* to_string(arg_role r);

} // namespace leap::env
