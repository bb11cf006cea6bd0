#include "env/compare.hpp"

#include "env/harness/protocol.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace leap::env {

std::size_t outputs_bytes(const task_spec& task, int trials) {
  std::size_t total = 0;
  for (auto& s : task.sizes)
    for (std::size_t i = 0; i < task.args.size(); ++i)
      if (task.args[i].p.is_pointer && task.is_output(i))
        total += static_cast<std::size_t>(task.elements(i, s)) * 4 * static_cast<std::size_t>(trials);
  return total;
}

output_source output_source::of(std::string_view bytes) {
  output_source s;
  s.view_ = bytes;
  s.size_ = bytes.size();
  return s;
}

result<output_source> output_source::open(const std::string& path, std::size_t limit) {
  // Not through a link, and never blocking: a candidate could leave a link or a FIFO where its
  // outputs belong (a FIFO would block the open until someone writes to it).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return make_error(path + ": cannot open for reading: " + std::strerror(errno));
  output_source s;
  s.file_.reset(::fdopen(fd, "rb"));
  if (!s.file_) {
    ::close(fd);
    return make_error(path + ": cannot open for reading: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return make_error(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return make_error(path + ": not a regular file");
  s.size_ = std::min(static_cast<std::size_t>(st.st_size), limit);
  return s;
}

const char* output_source::next(std::size_t n) {
  if (n > piece_bytes || pos_ + n > size_)
    return nullptr;
  if (!file_) {
    const char* p = view_.data() + pos_;
    pos_ += n;
    return p;
  }
  piece_.resize(piece_bytes);
  if (std::fread(piece_.data(), 1, n, file_.get()) != n)
    return nullptr;
  pos_ += n;
  return piece_.data();
}

comparison compare_outputs(const task_spec& task, int trials, std::string_view cand,
                           std::string_view ref) {
  auto c = output_source::of(cand);
  auto r = output_source::of(ref);
  return compare_outputs(task, trials, c, r);
}

comparison compare_outputs(const task_spec& task, int trials, output_source& cand,
                           output_source& ref) {
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
  constexpr long long piece_elements = output_source::piece_bytes / 4;
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
        for (long long k0 = 0; k0 < n; k0 += piece_elements) {
          const long long m = std::min(piece_elements, n - k0);
          const char* rp = ref.next(static_cast<std::size_t>(m) * 4);
          const char* cp = cand.next(static_cast<std::size_t>(m) * 4);
          if (!rp || !cp) {
            c = comparison{};
            c.malformed = std::string(!rp ? "reference" : "candidate")
                          + " outputs ended early: the file shrank while it was read";
            return c;
          }
          for (long long j = 0; j < m; ++j) {
            const long long k = k0 + j;
            double e, g;
            if (is_int) {
              std::int32_t ei, gi;
              std::memcpy(&ei, rp + 4 * j, 4);
              std::memcpy(&gi, cp + 4 * j, 4);
              e = ei;
              g = gi;
            } else {
              float ef, gf;
              std::memcpy(&ef, rp + 4 * j, 4);
              std::memcpy(&gf, cp + 4 * j, 4);
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

namespace {

// One candidate buffer for every (size set, trial): each output filled by `fill(size set, output
// argument, its element count, input data of that trial by argument index)`.
template <class Fill>
std::string degenerate(const task_spec& task, int trials, std::string_view inputs, bool& short_inputs, Fill fill) {
  std::string out;
  std::size_t off = 0;
  for (std::size_t s = 0; s < task.sizes.size(); ++s)
    for (int t = 0; t < trials; ++t) {
      std::vector<std::string_view> in(task.args.size());
      for (std::size_t ai = 0; ai < task.args.size(); ++ai) {
        const auto& a = task.args[ai];
        if (!a.p.is_pointer || (a.role != arg_role::input && a.role != arg_role::inout))
          continue;
        auto bytes = static_cast<std::size_t>(task.elements(ai, task.sizes[s])) * 4;
        if (off + bytes > inputs.size()) {
          short_inputs = true;
          return out;
        }
        in[ai] = inputs.substr(off, bytes);
        off += bytes;
      }
      for (std::size_t ai = 0; ai < task.args.size(); ++ai)
        if (task.args[ai].p.is_pointer && task.is_output(ai))
          out += fill(ai, static_cast<std::size_t>(task.elements(ai, task.sizes[s])) * 4, in);
    }
  return out;
}

} // namespace

std::optional<std::string> degenerate_answer_passes(const task_spec& task, int trials,
                                                    std::string_view inputs,
                                                    std::string_view reference) {
  bool short_inputs = false;
  auto passes = [&](const std::string& cand) {
    return !short_inputs && compare_outputs(task, trials, cand, reference).ok;
  };
  std::string poison_word(4, '\0');
  std::memcpy(poison_word.data(), &harness::poison_bits, 4);
  auto zeros = degenerate(task, trials, inputs, short_inputs,
                          [](std::size_t, std::size_t bytes, auto&) { return std::string(bytes, '\0'); });
  if (passes(zeros))
    return std::string("every output all zeros");
  auto poison = degenerate(task, trials, inputs, short_inputs, [&](std::size_t, std::size_t bytes, auto&) {
    std::string b;
    for (std::size_t k = 0; k < bytes / 4; ++k)
      b += poison_word;
    return b;
  });
  if (passes(poison))
    return std::string("every output left unwritten (the poison)");
  for (std::size_t src = 0; src < task.args.size(); ++src) {
    const auto& a = task.args[src];
    if (!a.p.is_pointer || (a.role != arg_role::input && a.role != arg_role::inout))
      continue;
    auto copy = degenerate(task, trials, inputs, short_inputs,
                           [&](std::size_t, std::size_t bytes, const std::vector<std::string_view>& in) {
                             std::string b(in[src].substr(0, bytes));
                             b.resize(bytes, '\0');
                             return b;
                           });
    if (passes(copy)) {
      std::string outs;
      for (std::size_t ai = 0; ai < task.args.size(); ++ai)
        if (task.args[ai].p.is_pointer && task.is_output(ai))
          outs += (outs.empty() ? "'" : ", '") + task.args[ai].p.name + "'";
      return "output " + outs + " a copy of input '" + a.p.name + "'";
    }
  }
  if (short_inputs)
    return std::string("(the inputs are shorter than the task's arguments: nothing could be checked)");
  return std::nullopt;
}

} // namespace leap::env
