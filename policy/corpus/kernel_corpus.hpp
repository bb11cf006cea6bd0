// The generated kernel corpus: from the bundled task suite and
// a seed, code produces many candidate solutions per task (several correct strategies and block
// sizes, in one canonical code style) and buggy variants derived from them by mutators. Nothing
// here labels a variant: runtime/corpus_build runs every variant through the real environment and
// keeps the real verdict. Pure functions of (tasks, seed), no I/O, no globals: any thread may call
// them.
#pragma once

#include "common/result.hpp"
#include "env/task.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leap::corpus {

enum class variant_kind { solution, buggy };

// The bug a mutator injects into a correct variant.
enum class bug_kind {
  none = 0,
  off_by_one,          // a bounds comparison `<` becomes `<=` (or `>=` becomes `>`)
  missing_bounds,      // a bounds check (guard or guarded load) is removed
  wrong_index,         // an index expression is replaced by a plausible wrong one
  missing_sync,        // one __syncthreads() is removed
  wrong_reduction,     // wrong reduction init, operator or loop bound
  uninit_output,       // the zeroing of an accumulated output (cudaMemset) is removed
  typo_semicolon,      // does not compile: a statement loses its `;`
  typo_identifier,     // does not compile: an identifier is misspelled
  typo_type,           // does not compile: a kernel parameter gets the wrong pointer type
  swapped_name,        // one use of a variable or parameter names another one of the same source
                       // (`out[i] = f(y[i])` for `f(x[i])`, `const int n = ...` for `i`): the
                       // commonest slip of a sampled model; compiles or not, the label says
  sampling_noise,      // 2-4 slips at once (swapped names, misspelled identifiers, a lost `;`),
                       // as a model sampled at temperature 1 leaves them: its repair target is
                       // the clean origin, so SFT sees noisy code of its own kind before a fix
  typo_bracket,        // does not compile: a statement's brackets no longer balance (a `)`
                       // dropped, or a `)` or `]` doubled), the commonest compile error of the
                       // small quickstart model sampled at temperature 1
};

const char* to_string(bug_kind b);
bool parse_bug_kind(std::string_view text, bug_kind& out);
const char* to_string(variant_kind k);
// All bug kinds except none, in enum order.
const std::vector<bug_kind>& all_bug_kinds();
inline bool is_typo(bug_kind b) {
  return b == bug_kind::typo_semicolon || b == bug_kind::typo_identifier || b == bug_kind::typo_type
         || b == bug_kind::typo_bracket;
}
// Bugs injected into the rendered source (typos and swapped names) rather than at template sites.
inline bool acts_on_source(bug_kind b) {
  return is_typo(b) || b == bug_kind::swapped_name || b == bug_kind::sampling_noise;
}

struct variant {
  std::string task;
  std::string family;     // elementwise | rowwise | columnwise | reduction | matmul | pooling | indexing
                          // | generated (env/taskgen tasks)
  std::string strategy;   // e.g. grid_stride, float4, block_tree, warp_shuffle, smem_tiled
  std::string name;       // unique within the task, e.g. "grid_stride.b256.s1" or "bug.off_by_one.naive.b128.s0"
  variant_kind kind = variant_kind::solution;
  bug_kind bug = bug_kind::none;
  std::string source;     // the whole .cu candidate
  // Buggy variants only: the correct variant it was derived from (name and source).
  std::string origin;
  std::string origin_source;
};

struct generate_options {
  std::uint64_t seed = 1;
  // Buggy variants per (task, bug kind) where the kind applies (distinct origins when possible).
  int bugs_per_kind = 1;
  // The same for generated tasks (env/taskgen), apart: thousands of them can be labelled for
  // turn-1 targets while only the bundled tasks' bugs, or a few, become repair dialogues.
  int generated_bugs_per_kind = 1;
  // The generated tasks that get those bugs, by name; empty = every one. The others are turn-1
  // targets only, and the seeded choices of the listed ones do not change.
  std::vector<std::string> generated_bug_tasks;
  // Correct variants per task: the first N strategies of each task (its simplest first), and only
  // buggy variants derived from them; 0 = every strategy the family has.
  int solutions_per_task = 0;
  // The bug kinds to inject, in all_bug_kinds() order whatever the order here; empty = all.
  std::vector<bug_kind> kinds;
  // Restrict to these task names (empty = every task given).
  std::vector<std::string> only_tasks;
};

// Every variant for every task, deterministic in (tasks, options). Correct-strategy variants of a
// task come first, then its buggy ones. An error names a task the generator has no family for.
// Generated tasks (env/taskgen: named gen_..., reference starting `// leap-taskgen-op:`) need no
// family: family "generated", one correct variant ("reference.naive": the naive reference without
// its comment lines and unused math helpers) and the bug kinds that act on any kernel text (the
// source kinds, and off_by_one / missing_bounds on the kernel's `if (.. >= ..) return;` guard).
result<std::vector<variant>> generate(const std::vector<env::task_spec>& tasks,
                                      const generate_options& opt);
// Whether `v` is a generated task's one correct variant: its reference with only comment lines
// and unused helper functions removed, so it computes what the reference computes.
bool is_generated_reference(const variant& v);

// Task names the generator knows (every bundled task).
std::vector<std::string> known_tasks();
std::string family_of(std::string_view task);

// ---- Markup used by the templates (exposed for tests) ----------------------------------------
// A template is CUDA source with markers that say where a mutator may act:
//   `$<`  a bounds `<`        `$>=` a bounds `>=`         `$SYNC` a __syncthreads();
//   `@G{code}G@`  a removable guard            `@Z{code}Z@`  a removable output zeroing
//   `@X{good~|~bad}X@` an alternative, X = I (wrong_index), R (wrong_reduction), B (missing_bounds)
// render() gives the correct source; mutate() the source with site `site` of `kind` changed.
std::string render(std::string_view markup);
int count_sites(std::string_view markup, bug_kind kind);
result<std::string> mutate(std::string_view markup, bug_kind kind, int site);
// Typos and swapped names act on rendered source; `pick` chooses among the candidate spots
// (deterministic).
result<std::string> inject_typo(std::string_view source, bug_kind kind, std::uint64_t pick);

} // namespace leap::corpus
