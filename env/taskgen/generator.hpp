// The generated task families: a deterministic generator of verified-format tasks from the
// operator IR (ir.hpp). Each generated task is rendered in the suite's own format (a task.toml
// text with prose, signature, args, sizes and tolerances, plus a CUDA reference) and loaded
// through env's task loader, so it is a task_spec like a bundled one. Pure: no file I/O, no
// LibTorch; every function may be called from any thread (results are values).
//
// Names: gen_<family>_<kind><5 digits>, e.g. gen_ew_t00042, where kind is
//   t  train: a training operator,
//   i  held-out instance: eval split, a new operator of a composition that train tasks use,
//   c  held-out composition: eval split, a composition (template and op combination) that no
//      train task uses,
//   p  paraphrase: train split, train operator n (the same operator as t<n>) worded otherwise:
//      other buffer names (x and y, pred and target, a, b and w, ...) and the phrasings of
//      hand-written tasks, so that a model trained on them learns to read the prose and copy the
//      signature rather than one generator's wording (elementwise only; the other families'
//      paraphrases are a second draw of their own wording, sizes and ranges).
//   w  written: train split, train operator n worded as a paraphrase (a draw of its own) and laid
//      out as the suite's hand-written tasks are: one paragraph of prose with the formula inline
//      (after the opener's line, or within the opener's sentence), not a formula on a line of its
//      own between fixed sentences, and (elementwise) every input's range stated, one input's, or
//      none, so that a model reads the formula wherever the line breaks fall and takes the
//      parameter list from the signature.
//   n  notation: train split, train operator n worded in the mathematical notation of the
//      suite's hand-written tasks (`out[c] = (1 / rows) * sum_r x[r, c]`, `sum_{0 <= k <= j}`,
//      `max_{0 <= a < k} x[c, j * s + a]`, `alpha * (exp(x) - 1) with alpha = 1 and x = x[i]`),
//      opened by the operation's name as a person writes it (often with its torch call), the
//      buffers named per task, and pooling windows and strides sometimes passed as the ints k
//      and s; laid out as a written form. Broadcast, layout and stencil tasks, which have no
//      notation of their own, render as another written form.
// The number is the position in that family's list for that kind, so a name denotes the same
// task for a given seed however many tasks are requested (lists are prefixes of one order).
#pragma once

#include "common/result.hpp"
#include "env/task.hpp"
#include "env/taskgen/ir.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace leap::taskgen {

enum class gen_kind { train, eval_instance, eval_composition };
const char* to_string(gen_kind k);

struct gen_options {
  std::uint64_t seed = 1;
  int train = 0;             // train tasks, spread over the families round-robin
  int eval_instances = 0;    // held-out instances (eval split), round-robin
  int eval_compositions = 0; // held-out compositions (eval split), round-robin
};

struct gen_task {
  std::string name;
  gen_kind kind = gen_kind::train;
  bool paraphrase = false; // gen_<family>_p<n>, gen_<family>_w<n> or gen_<family>_n<n>
  bool written = false;    // gen_<family>_w<n> (a paraphrase laid out as one paragraph)
  bool notation = false;   // gen_<family>_n<n> (in the hand-written tasks' notation)
  gen_op op;
  std::string toml;      // the task.toml text
  std::string reference; // the reference .cu; its first line holds serialize(op)
  env::task_spec spec;   // toml + reference through env::parse_task
};

// The whole generated suite for `opt`: train tasks first, then held-out instances, then held-out
// compositions; each group round-robin over the families. An error if a family cannot supply
// enough distinct operators (it says which and how many it could).
result<std::vector<gen_task>> generate_suite(const gen_options& opt);

// The task specs of generate_suite(opt), to add to a loaded suite; none when every count is 0.
result<std::vector<env::task_spec>> generated_specs(const gen_options& opt);

// One task by name, under `seed` (what a user passes to `leap check --task gen_...`).
result<gen_task> generate_task(std::uint64_t seed, std::string_view name);
// The name of a family's `index`-th task of kind `k` (gen_ew_t00042 for ew, train, 42).
std::string task_name(family f, gen_kind k, int index);
// The name of the paraphrase of a family's `index`-th train task (gen_ew_p00042).
std::string paraphrase_name(family f, int index);
// The paraphrase of a generated train task's name (gen_ew_t00042 -> gen_ew_p00042); an error
// when `train_name` is not one.
result<std::string> paraphrase_of(std::string_view train_name);
// The name of the written form of a family's `index`-th train task (gen_ew_w00042), and of a
// generated train task's name (gen_ew_t00042 -> gen_ew_w00042; an error when it is not one).
std::string written_name(family f, int index);
result<std::string> written_of(std::string_view train_name);
// The name of the notation form of a family's `index`-th train task (gen_ew_n00042), and of a
// generated train task's name (gen_ew_t00042 -> gen_ew_n00042; an error when it is not one).
std::string notation_name(family f, int index);
result<std::string> notation_of(std::string_view train_name);
// generate_task() for a list of names, each family's operators drawn once (a list of the first
// 600 elementwise tasks costs one draw of 600, not 600 draws); in the order given.
result<std::vector<gen_task>> generate_tasks(std::uint64_t seed, const std::vector<std::string>& names);
bool is_generated_name(std::string_view name);
// The family of a generated task's name (ew for gen_ew_t00042); an error when it is none.
result<family> family_of(std::string_view name);

// The operator a generated reference was rendered from (its first line), for the oracle.
// An error when `reference_source` is not a generated reference.
result<gen_op> op_of_reference(std::string_view reference_source);

// The split class of an operator (independent of the seed and of how many tasks are asked for):
// held-out composition when hash(composition) falls in the held-out range, held-out instance when
// hash(canonical form) does, train otherwise.
gen_kind classify(const gen_op& op);

// The bundled eval-split operators that these families can express, as IR (a few written forms
// each), keyed by task name. No generated task of any kind has one of their compositions.
std::vector<std::pair<std::string, gen_op>> eval_split_operators();
// The bundled eval-split operators no family here can express (so none can be generated).
std::vector<std::string> eval_split_operators_outside_families();

// The tolerance refusal: with `op`'s outputs computed on sample inputs (drawn from the input
// ranges of the task `op` renders to under `seed`, at a small size set), an error saying which degenerate answer would pass when
// an all-zero output, a copy of any input (its leading elements), a constant output (the mean)
// passes atol/rtol; also when the expected values are not finite or exceed 1e4 in magnitude, or
// when a naive float32 evaluation of the same operator fails the tolerance (unfair to solvers).
result<void> check_tolerance(const gen_op& op, double atol, double rtol, std::uint64_t seed = 1);

// The operator's outputs computed directly (sequential loops, in double), for the tolerance
// check and tests. `inputs` by argument name; sizes by int argument name.
std::vector<double> evaluate(const gen_op& op, const env::size_set& sizes,
                             const std::map<std::string, std::vector<double>>& inputs);

} // namespace leap::taskgen
