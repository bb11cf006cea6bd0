// The reference-verification workflow: see verify_tasks.hpp.
#include "runtime/workflows/verify_tasks.hpp"

#include "common/fs.hpp"
#include "env/compare.hpp"
#include "env/harness/protocol.hpp"
#include "env/oracles/gen_oracle.hpp"
#include "env/oracles/task_oracles.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace leap::runtime {

namespace {

// Runs the oracle on every (size set, trial) of the dumped inputs and lays its outputs out
// like outputs.bin, so env::compare_outputs can compare them with the reference's.
result<std::string> oracle_outputs(const env::task_spec& task, int trials, const std::string& inputs) {
  std::string out;
  std::size_t off = 0;
  for (std::size_t s = 0; s < task.sizes.size(); ++s) {
    for (int t = 0; t < trials; ++t) {
      oracles::oracle_case c;
      for (auto& a : task.args)
        if (!a.p.is_pointer)
          c.ints[a.p.name] = task.sizes[s].at(a.p.name);
      for (std::size_t ai = 0; ai < task.args.size(); ++ai) {
        const auto& a = task.args[ai];
        if (!a.p.is_pointer)
          continue;
        auto n = static_cast<std::size_t>(task.elements(ai, task.sizes[s]));
        oracles::oracle_buffer b;
        b.is_int = a.p.kind == env::scalar_kind::i32;
        if (b.is_int)
          b.i32.resize(n);
        else
          b.f32.resize(n);
        if (a.role == env::arg_role::input || a.role == env::arg_role::inout) {
          if (off + 4 * n > inputs.size())
            return make_error("inputs.bin is shorter than the task's inputs");
          std::memcpy(b.is_int ? static_cast<void*>(b.i32.data()) : static_cast<void*>(b.f32.data()),
                      inputs.data() + off, 4 * n);
          off += 4 * n;
          c.inputs[a.p.name] = b;
        }
        if (task.is_output(ai))
          c.outputs[a.p.name] = b;
      }
      auto r = oracles::run_any_oracle(task.name, task.reference_source, c);
      if (!r)
        return r.err();
      for (std::size_t ai = 0; ai < task.args.size(); ++ai) {
        const auto& a = task.args[ai];
        if (!a.p.is_pointer || !task.is_output(ai))
          continue;
        auto& b = c.outputs.at(a.p.name);
        auto n = static_cast<std::size_t>(task.elements(ai, task.sizes[s]));
        if ((b.is_int ? b.i32.size() : b.f32.size()) != n)
          return make_error("the oracle returned a wrong-sized output '" + a.p.name + "'");
        out.append(b.is_int ? reinterpret_cast<const char*>(b.i32.data())
                            : reinterpret_cast<const char*>(b.f32.data()),
                   4 * n);
      }
    }
  }
  return out;
}

} // namespace

std::vector<verify_row> verify_tasks(services& svc, evaluator& ev,
                                     const std::vector<std::string>& only) {
  std::vector<check_item> items;
  for (auto& [name, t] : *svc.tasks)
    if (only.empty() || std::find(only.begin(), only.end(), name) != only.end())
      items.push_back({name, "", true, true});
  auto outcomes = ev.evaluate(items);
  std::vector<verify_row> rows;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& task = svc.tasks->at(items[i].task);
    verify_row row;
    row.task = task.name;
    row.level = task.level;
    auto& o = outcomes[i];
    if (!o) {
      row.problem = o.message();
      rows.push_back(row);
      continue;
    }
    row.compile_seconds = o->v.compile_seconds;
    row.cached = o->v.cached;
    row.run_seconds = o->v.run_seconds;
    row.timed = o->v.timed;
    row.reference_ms = o->v.reference_ms;
    if (o->v.st != env::status::correct) {
      row.problem = std::string("reference run: ") + env::to_string(o->v.st) + ": " + o->v.feedback;
    } else if (!oracles::has_any_oracle(task.name, task.reference_source)) {
      row.problem = "no LibTorch oracle for this task";
    } else {
      auto inputs = read_file(o->kept_dir + "/" + harness::inputs_file);
      auto ref_out = read_file(o->kept_dir + "/" + harness::outputs_file);
      if (!inputs || !ref_out) {
        row.problem = "the reference run left no inputs/outputs";
      } else {
        auto want = oracle_outputs(task, svc.cfg.executor.trials, *inputs);
        if (!want) {
          row.problem = "oracle: " + want.message();
        } else {
          // The oracle is the expected side; the reference is checked against it.
          auto c = env::compare_outputs(task, svc.cfg.executor.trials, *ref_out, *want);
          row.max_abs_vs_oracle = c.max_abs;
          row.max_rel_vs_oracle = c.max_rel;
          if (c.malformed)
            row.problem = *c.malformed;
          else if (!c.ok)
            row.problem = "reference disagrees with LibTorch on output " + c.output + " at index "
                          + std::to_string(c.first_index) + " (torch " + std::to_string(c.expected)
                          + ", reference " + std::to_string(c.actual) + ")";
          else if (auto d = env::degenerate_answer_passes(task, svc.cfg.executor.trials, *inputs,
                                                          *ref_out))
            // A tolerance that a trivial answer meets makes every such candidate correct.
            row.problem = "the task's tolerance (atol " + std::to_string(task.atol) + ", rtol "
                          + std::to_string(task.rtol) + ") passes a degenerate answer: " + *d
                          + "; tighten it or change the inputs or sizes";
          else
            row.ok = true;
        }
      }
    }
    if (!o->kept_dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(o->kept_dir, ec);
    }
    rows.push_back(row);
  }
  return rows;
}

} // namespace leap::runtime
