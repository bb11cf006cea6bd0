// The task model: one bundled or user task (tasks/<name>/task.toml + reference .cu) and the
// loader that validates it. Loading is plain file I/O; call it from the CLI or at actor start,
// never per attempt. A loaded task_spec is an immutable value, safe to share across threads.
#pragma once

#include "common/result.hpp"
#include "env/signature.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace leap::env {

enum class arg_role { input, output, inout, size };

// Which role a task plays: train tasks feed the SFT corpus and the RL draw; eval tasks are held
// out and only `leap eval` (and `leap check`, `leap serve`, `leap tasks verify`) use them.
enum class task_split { train, eval };

// The operator categories of the bundled suite (KernelBench level-1/2 groupings). Every eval task
// is a different operator of a category that also has train tasks.
enum class task_category {
  activation, elementwise, reduction, norm, softmax, pooling, convolution, matmul, loss, scan,
  indexing, attention, fused, layout
};

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
  // The name the prompt shows ("Task: <title>"), when set; else `name`. Generated paraphrases name
  // their operator here (e.g. clamp_minimum) as a person would, while `name` stays the identifier.
  std::string title;
  int level = 1;
  task_split split = task_split::train;
  task_category category = task_category::elementwise;
  std::string description;
  std::string signature;
  std::string spec_path;       // the task.toml
  std::string spec_source;     // its text, as loaded
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
// The same checks on a task held in memory (a generated task): `spec_path` names it in messages
// and becomes spec_path; the reference is `reference_source`, not read from disk.
result<task_spec> parse_task(const std::string& spec_path, const std::string& toml_text,
                             const std::string& reference_source);
// Loads every <dir>/*/task.toml, sorted by level then name. Any broken task is an error.
result<std::vector<task_spec>> load_task_suite(const std::string& dir);
// Loads <dir>/<name>/task.toml, with an error listing the known names when absent.
result<task_spec> find_task(const std::string& dir, const std::string& name);

const char* to_string(arg_role r);
const char* to_string(task_split s);
const char* to_string(task_category c);
// Parses "train" / "eval"; the error lists the accepted values.
result<task_split> parse_task_split(std::string_view text);
result<task_category> parse_task_category(std::string_view text);
// Every category, in declaration order (for listings and docs).
const std::vector<task_category>& all_task_categories();

// A stable hash (16 hex digits of a SHA-256) of a task suite: every task's name, task.toml and
// reference source, in name order. Runs record it so results name the exact suite they measured.
std::string task_suite_hash(const std::vector<task_spec>& suite);
std::string task_suite_hash(const std::map<std::string, task_spec>& catalog);
// The tasks of `suite` whose split is `s`, in suite order.
std::vector<std::string> tasks_of_split(const std::vector<task_spec>& suite, task_split s);

// The tasks a role uses. `listed` is the configured list (its config key or flag is `key`, for
// messages); empty means every task of the `allowed` splits, in name order. A listed task that is
// unknown, listed twice, or of a split the role may not use is an error naming `key`, the task
// and its task.toml, e.g. "train.tasks: 'elu' is an eval-split task (held out ...)". An empty
// selection is an error too.
result<std::vector<std::string>> select_tasks(const std::map<std::string, task_spec>& catalog,
                                              const std::string& key,
                                              const std::vector<std::string>& listed,
                                              const std::vector<task_split>& allowed);

} // namespace leap::env
