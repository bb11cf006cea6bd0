// multinomial_one, the sampler's exact stand-in for torch::multinomial (decode_step.hpp); its
// vector loops are in the decode_kernels tables of the selected decode_path.
#include "policy/model/decode_kernels.hpp"
#include "policy/model/decode_step.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace leap::policy {
namespace {

// at::mt19937_engine::next_state.
void mt_next_state(at::mt19937_data_pod& d) {
  constexpr int n = at::MERSENNE_STATE_N, m = at::MERSENNE_STATE_M;
  constexpr std::uint32_t matrix_a = at::MATRIX_A, umask = at::UMASK, lmask = at::LMASK;
  auto twist = [&](std::uint32_t u, std::uint32_t v) {
    return ((((u & umask) | (v & lmask)) >> 1) ^ ((v & 1u) ? matrix_a : 0u));
  };
  std::uint32_t* p = d.state_.data();
  d.left_ = n;
  d.next_ = 0;
  for (int j = n - m + 1; --j; p++) *p = p[m] ^ twist(p[0], p[1]);
  for (int j = m; --j; p++) *p = p[m - n] ^ twist(p[0], p[1]);
  *p = p[m - n] ^ twist(p[0], d.state_[0]);
}

// n outputs of at::mt19937::operator() on the engine state `d`, as that operator would produce
// them (tempering vectorised; the state regenerated every 624 outputs exactly when it would be).
void mt_generate(const decode_kernels& kern, at::mt19937_data_pod& d, std::uint32_t* out, std::int64_t count) {
  while (count > 0) {
    if (d.left_ == 1) {  // this output's decrement reaches 0: the state is regenerated first
      mt_next_state(d);
      kern.temper(d.state_.data() + d.next_++, out++, 1);
      --count;
      continue;
    }
    const auto chunk = std::min<std::int64_t>(count, d.left_ - 1);
    kern.temper(d.state_.data() + d.next_, out, chunk);
    d.next_ += static_cast<std::uint32_t>(chunk);
    d.left_ -= static_cast<int>(chunk);
    out += chunk;
    count -= chunk;
  }
}

} // namespace

torch::Tensor multinomial_one(const torch::Tensor& probs, at::Generator& gen) {
  TORCH_CHECK(probs.dim() == 2 && probs.scalar_type() == torch::kFloat && probs.device().is_cpu(),
              "multinomial_one: expected float32 [R, V] on the CPU, got ", probs.sizes());
  // Every table draws exactly the same; an unusable LEAP_DECODE_PATH takes the portable loops.
  const auto path = selected_decode_path();
  const decode_kernels& kern = kernels_for(path.ok() ? *path : decode_path::portable);
  const auto p = probs.contiguous();
  const auto R = p.size(0), V = p.size(1);
  const float* pp = p.data_ptr<float>();
  auto out = torch::empty({R, 1}, torch::kLong);                                            // [R, 1]
  auto* op = out.data_ptr<std::int64_t>();
  auto* g = at::check_generator<at::CPUGeneratorImpl>(gen);
  std::lock_guard<std::mutex> lock(g->mutex_);
  // The generator's Mersenne Twister, stepped here in bulk (random64() is an out-of-line call per
  // draw) and stored back after the draws.
  at::mt19937 engine = g->engine();
  auto state = engine.data();
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(2 * V));
  std::vector<double> u(static_cast<std::size_t>(V));
  // Margin on the bound: float rounding of q and of p / q is below 2^-23 relative.
  constexpr double slack = 1.0 + 1e-6;
  // LibTorch's checks (before any draw), and each row's most probable entry: its quotient is the
  // row's first "best".
  std::vector<std::int64_t> firsts(static_cast<std::size_t>(R));
  for (std::int64_t r = 0; r < R; ++r) {
    const float* row = pp + r * V;
    std::int64_t first = 0;
    const bool finite = kern.scan_row(row, V, first);
    TORCH_CHECK(finite, "probability tensor contains either `inf`, `nan` or element < 0");
    TORCH_CHECK(row[first] > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    firsts[static_cast<std::size_t>(r)] = first;
  }
  for (std::int64_t r = 0; r < R; ++r) {
    const float* row = pp + r * V;
    const std::int64_t first = firsts[static_cast<std::size_t>(r)];
    // uniform_real<double>(0, 1) of random64(): two 32-bit outputs, the first one high.
    mt_generate(kern, state, bits.data(), 2 * V);
    kern.uniform(bits.data(), u.data(), V);
    auto quotient = [&](std::int64_t i) {                                         // as exponential_ then div
      const auto q = static_cast<float>(-1.0 * std::log(1.0 - u[static_cast<std::size_t>(i)]));
      return row[i] / q;
    };
    std::int64_t best_i = first;
    float best = quotient(first);
    auto visit = [&](std::int64_t i) {
      if (i == first) return;
      const float q = quotient(i);
      const bool wins = std::isnan(q) ? (!std::isnan(best) || i < best_i)
                                      : (!std::isnan(best) && (q > best || (q == best && i < best_i)));
      if (wins) {
        best = q;
        best_i = i;
      }
    };
    // q_i <= p_i / u_i: skip an entry when that bound is certainly below the best (never for a
    // NaN best or a zero u, where the comparison is false). Blocks test against the best as of
    // their start, which can only keep more entries; once the best is NaN nothing later wins.
    std::int64_t i = 0;
    for (; i + 8 <= V; i += 8)
      for (unsigned m = kern.candidates8(row + i, u.data() + i, static_cast<double>(best), slack); m != 0; m &= m - 1)
        visit(i + __builtin_ctz(m));
    for (; i < V; ++i)
      if (!(static_cast<double>(row[i]) * slack < static_cast<double>(best) * u[static_cast<std::size_t>(i)])) visit(i);
    op[r] = best_i;
  }
  engine.set_data(state);
  g->set_engine(engine);
  return out;
}

} // namespace leap::policy
