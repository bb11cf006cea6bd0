#include "env/compare.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace leap::env {

std::size_t outputs_bytes(const task_spec& task, int trials) {
  std::size_t total = 0;
  for (auto& s : task.sizes)
    for (std::size_t i = 0; i < task.args.size(); ++i)
      if (task.args[i].p.is_pointer && task.is_output(i))
        total += static_cast<std::size_t>(task.elements(i, s)) * 4 * static_cast<std::size_t>(trials);
  return total;
}

comparison compare_outputs(const task_spec& task, int trials, std::string_view cand,
                           std::string_view ref) {
  comparison c;
  auto want = outputs_bytes(task, trials);
  if (ref.size() != want) {
    c.malformed = "reference outputs have " + std::to_string(ref.size()) + " bytes, expected "
              + std::to_string(want);
    return c;
  }
  if (cand.size() != want) {
    c.malformed = "candidate outputs have " + std::to_string(cand.size()) + " bytes, expected "
              + std::to_string(want);
    return c;
  }
  std::size_t off = 0;
  bool all_ok = true;
  for (std::size_t s = 0; s < task.sizes.size(); ++s) {
    for (int t = 0; t < trials; ++t) {
      bool trial_ok = true;
      for (std::size_t ai = 0; ai < task.args.size(); ++ai) {
        const auto& a = task.args[ai];
        if (!a.p.is_pointer || !task.is_output(ai))
          continue;
        auto n = task.elements(ai, task.sizes[s]);
        bool is_int = a.p.kind == scalar_kind::i32;
        long long bad = 0, first = -1;
        double exp_first = 0, act_first = 0;
        for (long long k = 0; k < n; ++k) {
          double e, g;
          if (is_int) {
            std::int32_t ei, gi;
            std::memcpy(&ei, ref.data() + off + 4 * k, 4);
            std::memcpy(&gi, cand.data() + off + 4 * k, 4);
            e = ei;
            g = gi;
          } else {
            float ef, gf;
            std::memcpy(&ef, ref.data() + off + 4 * k, 4);
            std::memcpy(&gf, cand.data() + off + 4 * k, 4);
            e = ef;
            g = gf;
          }
          double abs_err = std::isnan(g) || std::isinf(g) ? std::numeric_limits<double>::infinity()
                                                          : std::fabs(g - e);
          if (std::isinf(g) && std::isinf(e) && (g > 0) == (e > 0))
            abs_err = 0;
          double rel_err = e != 0 ? abs_err / std::fabs(e) : (abs_err == 0 ? 0 : abs_err);
          bool pass = is_int ? g == e : abs_err <= task.atol + task.rtol * std::fabs(e);
          if (abs_err > c.max_abs || std::isnan(c.max_abs))
            c.max_abs = abs_err;
          if (rel_err > c.max_rel)
            c.max_rel = rel_err;
          if (!pass) {
            if (first < 0) {
              first = k;
              exp_first = e;
              act_first = g;
            }
            ++bad;
          }
        }
        if (bad > 0) {
          trial_ok = false;
          if (c.first_index < 0) {
            c.first_index = first;
            c.output = a.p.name;
            c.size_set = static_cast<int>(s);
            c.trial = t;
            c.expected = exp_first;
            c.actual = act_first;
            c.mismatches = bad;
          }
        }
        off += static_cast<std::size_t>(n) * 4;
      }
      ++c.trials_compared;
      if (trial_ok)
        ++c.trials_passed;
      all_ok = all_ok && trial_ok;
    }
  }
  c.ok = all_ok;
  return c;
}

} // namespace leap::env
