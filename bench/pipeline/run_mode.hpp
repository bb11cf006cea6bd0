// `leap bench`: runs one mode of a scenario through the pipeline assembly of `leap train`
// (runtime/pipeline/assembly.hpp: the gatekeeper with the rollout state machine, the judge, the
// trainer and the supervised pools), with each stage real (the policy, nvcc, the backend) or a
// latency-model stand-in (bench/pipeline/latency_pools.hpp, latency_learner.hpp). Records the
// step reports, every pool's job trace and the learner's updates, in scenario seconds. Main
// thread (blocks until the last step); no CAF in this header.
#pragma once

#include "bench/pipeline/results.hpp"
#include "bench/pipeline/scenario.hpp"
#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace leap::bench {

// The modes a scenario runs side by side: async (as configured), sync (stage barriers), async
// with DCP off, and async with the other policy for a pruned group's turn-1 stragglers
// (cancelled when the scenario keeps them, kept when it cancels them).
enum class bench_mode : std::uint8_t { async, sync, async_no_dcp, async_cancel_turn1, async_keep_turn1 };
const char* to_string(bench_mode m);

// The mode that flips the scenario's train.cancel_pruned_turn1.
bench_mode turn1_mode_of(const scenario& sc);

// `svc` is needed when a stage is real (nullptr otherwise). `on_step(step, steps,
// scenario_seconds)` runs on an actor thread. With `nodes` (HOST:PORT of `leap bench node`
// processes on loopback; TLS when the scenario sets cluster.tls_*), compile and execute run
// there through the cluster dispatcher (actors/cluster.hpp) instead of in this process.
// With the nodes of `cluster.nodes` in sc.cfg (a real stage; `nodes` empty), compile and
// execute run on them through the pipeline assembly exactly as in `leap train`, the bundled
// candidates are substituted in front of the cluster, and the run records each node's part
// (mode_run::nodes).
result<mode_run> run_bench_mode(const scenario& sc, bench_mode mode, runtime::services* svc,
                                std::function<void(int, int, double)> on_step = {},
                                std::vector<std::string> nodes = {});

// One mode as `leap bench` runs it: with a real stage, over fresh services whose build cache is a
// new directory under `out_dir` (every mode compiles from cold; removed afterwards); progress
// lines on stderr when `progress`.
result<mode_run> run_scenario_mode(const scenario& sc, bench_mode mode, const std::string& out_dir,
                                   bool progress);

} // namespace leap::bench
