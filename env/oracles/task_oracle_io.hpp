// The pieces the task oracles' files share (env/oracles/task_oracles.hpp): typed access to one
// oracle_case (oracle_io), the pooling helpers, and the tables of the held-out eval split
// (task_oracles_eval.cpp) and of the added train tasks (task_oracles_train.cpp), which
// task_oracles.cpp merges into the one registry. Internal: only env/oracles/task_oracles*.cpp include
// it (it pulls in LibTorch). Oracles share no state; any thread may run them.
#pragma once

#include "env/oracles/task_oracles.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace leap::oracles::oracle_detail {

// Thrown inside the oracles only; run_oracle turns it into a leap::error.
struct oracle_failure {
  std::string message;
};

// Typed access to one oracle_case with size checks; failures throw oracle_failure.
class oracle_io {
public:
  oracle_io(std::string_view task, oracle_case& c) : task_(task), c_(c) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw oracle_failure{"oracle " + task_ + ": " + what};
  }

  // A size argument; must be present and positive.
  long long size(const std::string& name) const {
    auto it = c_.ints.find(name);
    if (it == c_.ints.end()) fail("missing int argument '" + name + "'");
    if (it->second <= 0) {
      fail("int argument '" + name + "' must be positive, got " + std::to_string(it->second));
    }
    return it->second;
  }

  // A float input buffer of exactly `numel` elements, as a 1-D float64 tensor.
  torch::Tensor input(const std::string& name, long long numel) const {
    const oracle_buffer& b = find_input(name, false, numel);
    auto t = torch::from_blob(const_cast<float*>(b.f32.data()), {static_cast<std::int64_t>(numel)},
                              torch::kFloat32);
    return t.to(torch::kFloat64);  // a copy: the caller's buffer is never aliased
  }

  // An int input buffer of exactly `numel` elements, as a 1-D int64 tensor.
  torch::Tensor input_int(const std::string& name, long long numel) const {
    const oracle_buffer& b = find_input(name, true, numel);
    auto t = torch::from_blob(const_cast<std::int32_t*>(b.i32.data()),
                              {static_cast<std::int64_t>(numel)}, torch::kInt32);
    return t.to(torch::kInt64);
  }

  // Writes `value` (any shape, numel elements) into the pre-sized output buffer `name`.
  void output(const std::string& name, const torch::Tensor& value, long long numel) {
    auto it = c_.outputs.find(name);
    if (it == c_.outputs.end()) fail("missing output buffer '" + name + "'");
    oracle_buffer& b = it->second;
    const auto have = static_cast<long long>(b.is_int ? b.i32.size() : b.f32.size());
    if (have != numel) {
      fail("output buffer '" + name + "' has " + std::to_string(have) + " elements, expected " +
           std::to_string(numel));
    }
    if (value.numel() != numel) {
      fail("computed " + std::to_string(value.numel()) + " elements for '" + name +
           "', expected " + std::to_string(numel));
    }
    if (b.is_int) {
      auto v = value.to(torch::kInt32).contiguous();
      std::memcpy(b.i32.data(), v.data_ptr<std::int32_t>(), numel * sizeof(std::int32_t));
    } else {
      auto v = value.to(torch::kFloat32).contiguous();
      std::memcpy(b.f32.data(), v.data_ptr<float>(), numel * sizeof(float));
    }
  }

private:
  const oracle_buffer& find_input(const std::string& name, bool want_int, long long numel) const {
    auto it = c_.inputs.find(name);
    if (it == c_.inputs.end()) fail("missing input buffer '" + name + "'");
    const oracle_buffer& b = it->second;
    if (b.is_int != want_int) {
      fail("input buffer '" + name + "' must hold " + (want_int ? "int32" : "float32") + " data");
    }
    const auto have = static_cast<long long>(want_int ? b.i32.size() : b.f32.size());
    if (have != numel) {
      fail("input buffer '" + name + "' has " + std::to_string(have) + " elements, expected " +
           std::to_string(numel));
    }
    return b;
  }

  std::string task_;
  oracle_case& c_;
};

using oracle_fn = std::function<void(oracle_io&)>;
using oracle_table = std::map<std::string, oracle_fn, std::less<>>;

// Pooling without padding over x (C x L or C x H x W): window k, stride s; the output is
// C x ((L - k) / s + 1) (per spatial dimension). `pool` is the LibTorch pooling op.
template <class Pool>
void pool1d(oracle_io& io, Pool pool) {
  const auto c = io.size("C");
  const auto l = io.size("L");
  const auto k = io.size("k");
  const auto s = io.size("s");
  if (k > l) io.fail("k must not exceed L");
  auto x = io.input("x", c * l).view({1, c, l});
  io.output("y", pool(x, k, s), c * ((l - k) / s + 1));
}

template <class Pool>
void pool2d(oracle_io& io, Pool pool) {
  const auto c = io.size("C");
  const auto h = io.size("H");
  const auto w = io.size("W");
  const auto k = io.size("k");
  const auto s = io.size("s");
  if (k > h || k > w) io.fail("k must not exceed H or W");
  auto x = io.input("x", c * h * w).view({1, c, h, w});
  io.output("y", pool(x, k, s), c * ((h - k) / s + 1) * ((w - k) / s + 1));
}

// C = A B (M x K times K x N): the oracle of matmul, and of matmul_small_k (task_oracles.cpp).
void matmul(oracle_io& io);

// The held-out eval split's oracles (task_oracles_eval.cpp): one operator per category, never in
// the SFT corpus.
void add_eval_split_oracles(oracle_table& table);
// The oracles of the train tasks added to the original suite, both blocks
// (task_oracles_train.cpp).
void add_train_block_oracles(oracle_table& table);

} // namespace leap::oracles::oracle_detail
