// GRPO learner step throughput for the quickstart decoder (configs/quickstart.toml: d_model 192,
// 3 layers, 6 heads, 3 KV heads, d_ff 512, vocab 2048: ~1.6M parameters) on batches shaped like a
// quickstart RL step: 32 sequences, prompts of ~P tokens (turn 1 ~200, later turns ~500 with the
// earlier attempt and its feedback), completions of 60..320 tokens, micro batch 8.
//   BM_grpo_step/P  - one policy_model::grpo_step (forward, loss, backward, AdamW)
// Counters: completion_tok_per_s (the tokens trained on) and all_tok_per_s (prompt + completion
// positions the forward runs over). Random weights; no timed assertions. Runs with leap's heap
// settings; `--default_allocator` shows glibc's defaults for comparison.
#include "bench/quickstart_model.hpp"
#include "common/allocator.hpp"
#include "policy/policy_model.hpp"

#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

namespace {

using namespace leap::policy;

std::vector<rl_sequence> make_batch(int prompt_len, int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> tok(10, 2000), plen(prompt_len * 3 / 4, prompt_len * 5 / 4),
    clen(60, 320);
  std::normal_distribution<double> adv(0.0, 1.0);
  std::vector<rl_sequence> out;
  for (int i = 0; i < n; ++i) {
    rl_sequence s;
    s.prompt.resize(static_cast<std::size_t>(plen(rng)));
    for (auto& t : s.prompt) t = tok(rng);
    s.completion.resize(static_cast<std::size_t>(clen(rng)));
    for (auto& t : s.completion) t = tok(rng);
    s.old_logprobs.assign(s.completion.size(), -7.6f); // about log(1/2048): random weights
    s.advantage = adv(rng);
    out.push_back(std::move(s));
  }
  return out;
}

void BM_grpo_step(benchmark::State& state) {
  auto m = policy_model::create(leap::bench::quickstart_model_config(), 1);
  if (!m) {
    state.SkipWithError(m.message().c_str());
    return;
  }
  const auto batch = make_batch(static_cast<int>(state.range(0)), 32, 7);
  long long completion = 0, all = 0;
  for (auto& s : batch) {
    completion += static_cast<long long>(s.completion.size());
    all += static_cast<long long>(s.prompt.size() + s.completion.size());
  }
  rl_options o;
  o.lr = 1e-6;
  o.micro_batch = 8;
  for (auto _ : state) {
    auto r = m->grpo_step(batch, o);
    if (!r) {
      state.SkipWithError(r.message().c_str());
      return;
    }
  }
  auto it = static_cast<double>(state.iterations());
  state.counters["completion_tok_per_s"] = benchmark::Counter(completion * it, benchmark::Counter::kIsRate);
  state.counters["all_tok_per_s"] = benchmark::Counter(all * it, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_grpo_step)->Arg(200)->Arg(500)->Unit(benchmark::kMillisecond)->MinTime(5.0)->UseRealTime();

} // namespace

// Runs with leap's heap settings (common/allocator.hpp), as `leap` does; --default_allocator
// keeps glibc's defaults, for the side-by-side comparison.
int main(int argc, char** argv) {
  bool tuned = true;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--default_allocator")
      tuned = false;
    else
      args.push_back(argv[i]);
  }
  if (tuned)
    leap::tune_allocator_for_tensors();
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::AddCustomContext("allocator", tuned ? "leap (tuned)" : "glibc default");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
