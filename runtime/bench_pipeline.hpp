// `leap bench`: runs one mode (async, sync, or async with DCP off) of a scenario through the
// real actor pipeline: the gatekeeper, judge and trainer of `leap train`, the supervised pools
// (real: the policy, nvcc, the backend; or the benchmark harness's latency models), and the
// latency-model learner. Records the step reports, every pool's job trace and the learner's
// updates, in scenario seconds. Main thread (blocks until the last step); no CAF in this header.
#pragma once

#include "bench/pipeline/results.hpp"
#include "bench/pipeline/scenario.hpp"
#include "common/result.hpp"
#include "runtime/services.hpp"

#include <functional>
#include <string>

namespace leap::runtime {

// mode: "async", "sync" or "async_no_dcp". `svc` is needed when a stage is real (nullptr
// otherwise). `on_step(step, steps, scenario_seconds)` runs on an actor thread.
result<bench::mode_run> run_bench_mode(const bench::scenario& sc, const std::string& mode,
                                       services* svc,
                                       std::function<void(int, int, double)> on_step = {});

} // namespace leap::runtime
