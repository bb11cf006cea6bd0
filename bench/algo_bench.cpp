// The pure LEAP math of algo/ on realistic groups (fixed seeds, so every run sees the same
// data): the rank tournament (every pair of G = 8, 16, 64 trajectories compared; a mixed group
// of solved-on-turn-1/2/3 and unsolved attempts, and an all-solved group where every pair goes
// to the speedup/token tie-breaks), every advantage estimator (rank, grpo, drgrpo, trloo,
// discounted) for G = 8, 16, 64 over up to 3 turns, and the DCP decision: the cost of one
// algo::decide call, and of a whole group's turn-1 verdicts arriving one by one with a decide
// call after each until the group is decided (as the gatekeeper does).
#include "algo/advantages.hpp"
#include "algo/dcp.hpp"
#include "algo/tournament.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace leap::algo;

namespace {

constexpr int k_max_turns = 3;

// One trajectory of a group: solved on turn 1 (40%), 2 (20%), 3 (10%) or never (30%); when
// `all_solved`, every one is solved (mostly on turn 1). A solved attempt has a measured speedup
// (log-normal around 1x, so many pairs are within the 5% margin); tokens 150-900 per turn.
trajectory random_trajectory(std::mt19937_64& rng, bool all_solved) {
  std::uniform_real_distribution<double> u(0, 1);
  std::lognormal_distribution<double> speedup(0.0, 0.6);
  std::uniform_int_distribution<int> tokens(150, 900);
  const double p = u(rng);
  int solved = all_solved ? (p < 0.7 ? 1 : p < 0.9 ? 2 : 3)
                          : (p < 0.4 ? 1 : p < 0.6 ? 2 : p < 0.7 ? 3 : 0);
  const int turns = solved ? solved : k_max_turns;
  trajectory t;
  long long total = 0;
  for (int k = 1; k <= turns; ++k) {
    t.turn_rewards.push_back(k == solved ? 1.0 : 0.0);
    total += tokens(rng);
  }
  t.outcome.solved_turn = solved;
  t.outcome.timed = solved != 0;
  t.outcome.speedup = solved ? speedup(rng) : 0;
  t.outcome.total_tokens = total;
  return t;
}

std::vector<trajectory> random_group(int g, bool all_solved, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<trajectory> out;
  for (int i = 0; i < g; ++i) out.push_back(random_trajectory(rng, all_solved));
  return out;
}

std::vector<trajectory_outcome> outcomes(const std::vector<trajectory>& group) {
  std::vector<trajectory_outcome> o;
  for (const auto& t : group) o.push_back(t.outcome);
  return o;
}

// A few different groups per size so one lucky ordering does not decide the figure.
constexpr int k_groups = 16;

void bm_tournament(benchmark::State& state, bool all_solved) {
  const int g = static_cast<int>(state.range(0));
  std::vector<std::vector<trajectory_outcome>> groups;
  for (int s = 0; s < k_groups; ++s) groups.push_back(outcomes(random_group(g, all_solved, 1000 + s)));
  const tournament_config cfg;
  std::size_t i = 0;
  for (auto _ : state) {
    auto r = play(groups[i++ % groups.size()], cfg);
    benchmark::DoNotOptimize(r.rewards.data());
  }
  state.SetItemsProcessed(state.iterations()); // groups
  state.counters["pairs"] = g * (g - 1) / 2.0;
  state.counters["per_pair"] = benchmark::Counter(g * (g - 1) / 2.0,
                                                  benchmark::Counter::kIsIterationInvariantRate |
                                                    benchmark::Counter::kInvert);
}

void bm_advantages(benchmark::State& state, estimator kind) {
  const int g = static_cast<int>(state.range(0));
  std::vector<std::vector<trajectory>> groups;
  for (int s = 0; s < k_groups; ++s) groups.push_back(random_group(g, false, 2000 + s));
  estimator_config cfg;
  cfg.kind = kind;
  std::size_t i = 0;
  for (auto _ : state) {
    auto a = advantages(groups[i++ % groups.size()], cfg);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(state.iterations()); // groups
}

// One decide() call; the (failed, passed) states cycle over every reachable one of the group.
void bm_dcp_decide(benchmark::State& state) {
  const int g = static_cast<int>(state.range(0));
  std::vector<std::pair<int, int>> states;
  for (int f = 0; f <= g; ++f)
    for (int p = 0; f + p <= g; ++p) states.emplace_back(f, p);
  std::shuffle(states.begin(), states.end(), std::mt19937_64(7));
  const dcp_config cfg; // paper's best: expand when N_fail >= G/2
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& s = states[i++ % states.size()];
    benchmark::DoNotOptimize(decide(cfg, g, s.first, s.second));
  }
  state.SetItemsProcessed(state.iterations()); // calls
}

// A group's turn-1 verdicts (fail probability drawn per group from 0.05..0.95) arrive one by
// one; decide() after each until it is no longer undecided.
void bm_dcp_group(benchmark::State& state) {
  const int g = static_cast<int>(state.range(0));
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<char>> groups; // 1 = failed
  for (int s = 0; s < 64; ++s) {
    const double p_fail = 0.05 + 0.9 * u(rng);
    std::vector<char> v;
    for (int k = 0; k < g; ++k) v.push_back(u(rng) < p_fail);
    groups.push_back(std::move(v));
  }
  const dcp_config cfg;
  std::size_t i = 0;
  long long calls = 0, expanded = 0;
  for (auto _ : state) {
    const auto& v = groups[i++ % groups.size()];
    int failed = 0, passed = 0;
    dcp_decision d = dcp_decision::undecided;
    for (char f : v) {
      (f ? failed : passed) += 1;
      ++calls;
      d = decide(cfg, g, failed, passed);
      if (d != dcp_decision::undecided) break;
    }
    expanded += d == dcp_decision::expand;
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations()); // groups
  state.counters["calls_per_group"] = static_cast<double>(calls) / static_cast<double>(state.iterations());
  state.counters["expanded_frac"] = static_cast<double>(expanded) / static_cast<double>(state.iterations());
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("G");
  for (int g : {8, 16, 64}) b->Arg(g);
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RegisterBenchmark("tournament/mixed", bm_tournament, false)->Apply(sizes);
  benchmark::RegisterBenchmark("tournament/all_solved", bm_tournament, true)->Apply(sizes);
  for (auto e : {estimator::rank, estimator::grpo, estimator::drgrpo, estimator::trloo, estimator::discounted})
    benchmark::RegisterBenchmark((std::string("advantages/") + to_string(e)).c_str(), bm_advantages, e)
      ->Apply(sizes);
  benchmark::RegisterBenchmark("dcp/decide_call", bm_dcp_decide)->Apply(sizes);
  benchmark::RegisterBenchmark("dcp/group_turn1", bm_dcp_group)->Apply(sizes);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
