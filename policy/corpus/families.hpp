// Internal to leap_corpus: the per-family template producers and their shared helpers (a
// deterministic rng, code styles, placeholder substitution). Pure; any thread may call them.
#pragma once

#include "env/task.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace leap::corpus::detail {

// splitmix64: the same sequence on every platform and standard library.
struct rng {
  std::uint64_t state;
  explicit rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool coin() { return (next() & 1) != 0; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
  // k distinct elements of v in v's order.
  template <class T>
  std::vector<T> sample(const std::vector<T>& v, std::size_t k) {
    std::vector<std::size_t> idx(v.size());
    for (std::size_t i = 0; i < idx.size(); ++i)
      idx[i] = i;
    for (std::size_t i = idx.size(); i > 1; --i)
      std::swap(idx[i - 1], idx[below(i)]);
    idx.resize(std::min(k, idx.size()));
    std::sort(idx.begin(), idx.end());
    std::vector<T> out;
    for (auto i : idx)
      out.push_back(v[i]);
    return out;
  }
};

std::uint64_t fnv1a(std::string_view s);

// One correct template (markup, see corpus.hpp) of a task.
struct tmpl {
  std::string strategy;
  std::string config;   // e.g. "b256", "t16", "rpb4"
  std::string markup;
};

// Code style of one variant: names and presentation, never semantics. make_style gives every
// variant the same canonical style (see families_common.cpp for why).
struct style {
  int id = 0;
  std::string kernel;       // kernel name
  std::string idx;          // main index variable
  bool named_block = false; // block size as a named constant (else a literal)
  bool helper = false;      // element op in a __device__ helper
};
style make_style(const env::task_spec& t, const std::string& strategy, rng& r);

using subs_t = std::vector<std::pair<std::string, std::string>>;
std::string fill(std::string text, const subs_t& subs);
// "const float* a, const float* b, float* c, int n" and "a, b, c, n" from the task signature.
std::string param_list(const env::task_spec& t);
std::string arg_list(const env::task_spec& t);
// File prologue: includes, the named block constant when asked. `what` summarises the strategy for
// readers of the generator; it is not emitted, since tidy() keeps the corpus comment-free.
std::string prologue(const env::task_spec& t, const style& st, const std::string& what, int block);
// `extern "C" void solution(<params>) {` + body + `}`: the host entry point of a template.
std::string host_fn(const env::task_spec& t, const std::string& body);
// `__global__ void <kernel>(<params>) {`: a kernel taking the task's own parameters.
std::string kernel_open(const env::task_spec& t, const style& st);
// "@BS@" replacement under the style: the constant's name or the literal.
std::string block_expr(const style& st, int block);

std::vector<tmpl> elementwise_templates(const env::task_spec& t, rng& r);
std::vector<tmpl> rowwise_templates(const env::task_spec& t, rng& r);
std::vector<tmpl> reduction_templates(const env::task_spec& t, rng& r);
std::vector<tmpl> matmul_templates(const env::task_spec& t, rng& r);
// The later train tasks: more matmul-family templates (batched / transposed-B / small-K GEMMs,
// attention scores, strided and bias+ReLU conv2d), pooling, and indexing (embedding, scatter_add).
std::vector<tmpl> matmul_more_templates(const env::task_spec& t, rng& r);
std::vector<tmpl> pooling_templates(const env::task_spec& t, rng& r);
std::vector<tmpl> indexing_templates(const env::task_spec& t, rng& r);

} // namespace leap::corpus::detail
