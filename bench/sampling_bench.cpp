// Batched GRPO-group sampling throughput for the quickstart decoder (configs/quickstart.toml:
// d_model 192, 3 layers, 6 heads, 3 KV heads, d_ff 512, vocab 2048: ~1.6M parameters), prompt 300
// tokens, group size 8:
//   BM_sample_group_cached   - sample_group (prefill once; float32 on the CPU: the fused
//                              decode_step over the prompt's cache shared by the group's rows)
//   BM_sample_group_nocache  - same sampling but a full forward over the whole sequence per token
// Counter tokens_per_s = generated tokens (G x new tokens) per second. Random weights, no eos, so
// every sample runs to max_new_tokens. Compare the two in one run; no timed assertions.
// G:1 and G:32 show how much of a call is per step rather than per row (the prompt prefill, the
// weights streamed once per step for all rows), so batching several groups per forward raises
// throughput.
//   BM_sample_group_path     - sample_group at G = 8 on each decode path in turn (decode_path.hpp,
//                              forced with set_decode_path): path 0 = libtorch (forward_cached,
//                              no fused step), 1 = portable, 2 = avx2, 3 = avx512; a path the CPU
//                              lacks reports an error. Compare their tokens_per_s within one run:
//     ./build/bench/bench_sampling --benchmark_filter=BM_sample_group_path
#include "bench/quickstart_model.hpp"
#include "common/allocator.hpp"
#include "policy/model/decode_step.hpp"
#include "policy/model/decoder.hpp"
#include "policy/model/sampler.hpp"

#include <benchmark/benchmark.h>
#include <torch/torch.h>

namespace {

using namespace leap::policy;

constexpr int prompt_len = 300;

decoder& quickstart_model() {
  static decoder m = [] {
    torch::manual_seed(0);
    return *make_decoder(leap::bench::quickstart_model_config());
  }();
  return m;
}

std::vector<int> make_prompt() {
  std::vector<int> p(prompt_len);
  for (int i = 0; i < prompt_len; ++i) p[i] = (i * 7919 + 13) % 2048;
  return p;
}

void BM_sample_group_cached(benchmark::State& state) {
  auto& m = quickstart_model();
  const auto prompt = make_prompt();
  sampling_params p;
  p.group_size = static_cast<int>(state.range(0));
  p.max_new_tokens = static_cast<int>(state.range(1));
  std::int64_t tokens = 0;
  for (auto _ : state) {
    auto out = sample_group(*m, prompt, p);
    if (!out.ok()) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    for (const auto& s : *out) tokens += s.length;
    ++p.seed;
  }
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

void BM_sample_group_path(benchmark::State& state) {
  const auto path = static_cast<decode_path>(state.range(0));
  if (auto set = set_decode_path(path); !set.ok()) {
    state.SkipWithError(set.message().c_str());
    return;
  }
  state.SetLabel(to_string(path));
  auto& m = quickstart_model();
  const auto prompt = make_prompt();
  sampling_params p;
  p.group_size = static_cast<int>(state.range(1));
  p.max_new_tokens = static_cast<int>(state.range(2));
  std::int64_t tokens = 0;
  for (auto _ : state) {
    auto out = sample_group(*m, prompt, p);
    if (!out.ok()) {
      state.SkipWithError(out.message().c_str());
      break;
    }
    for (const auto& s : *out) tokens += s.length;
    ++p.seed;
  }
  (void)set_decode_path(std::nullopt);
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

// The reference without a cache: every new token re-runs the full forward over [G, P + t].
void BM_sample_group_nocache(benchmark::State& state) {
  auto& m = quickstart_model();
  const auto prompt = make_prompt();
  const auto G = state.range(0), new_tokens = state.range(1);
  std::int64_t tokens = 0;
  for (auto _ : state) {
    c10::InferenceMode guard;
    auto ids = torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end())).unsqueeze(0).repeat({G, 1});
    for (std::int64_t t = 0; t < new_tokens; ++t) {
      auto logits = m->forward(ids).select(1, ids.size(1) - 1).to(torch::kFloat);      // [G, V]
      auto next = torch::multinomial(torch::softmax(logits, -1), 1);                  // [G, 1]
      ids = torch::cat({ids, next}, 1);
    }
    tokens += G * new_tokens;
  }
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

} // namespace

BENCHMARK(BM_sample_group_cached)->ArgNames({"G", "new"})->Args({8, 128})->Args({8, 32})->Args({1, 128})->Args({32, 128})
    ->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_sample_group_path)->ArgNames({"path", "G", "new"})->Args({0, 8, 128})->Args({1, 8, 128})
    ->Args({2, 8, 128})->Args({3, 8, 128})->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_sample_group_nocache)->ArgNames({"G", "new"})->Args({8, 32})->Args({8, 128})
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// With leap's heap settings (common/allocator.hpp), as `leap` itself runs.
int main(int argc, char** argv) {
  leap::tune_allocator_for_tensors();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
