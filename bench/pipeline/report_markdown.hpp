// `leap bench --out DIR`'s Markdown: DIR/<scenario>.md beside the CSV, the table that
// docs/results.md includes (scripts/bench_tables.py copies it into docs/bench/ and refreshes the
// marked blocks of the docs). Each file starts with the run's stamp (bench/pipeline/stamp.hpp),
// then the comparison (modes side by side, ratios against sync and async from the same run), the
// sweep, or the cluster scaling table. Pure; any thread.
#pragma once

#include "bench/pipeline/report.hpp"
#include "bench/pipeline/stamp.hpp"

#include <string>
#include <vector>

namespace leap::bench {

// The four modes of one scenario: stamp, shape, one row per mode, then the bound, DCP and the
// turn-1 straggler policy in words.
std::string render_markdown(const comparison& c, const run_stamp& stamp);

// A --sweep: stamp, shape, one row per grid point.
std::string render_sweep_markdown(const std::string& scenario, const std::string& shape,
                                  const std::vector<sweep_point>& pts, const run_stamp& stamp);

// One node count of the cluster scenario (0 = the same pools in the head's process).
struct cluster_row {
  int nodes = 0;
  double attempts_per_second = 0;
  double bound = 0;             // analytic bound of that many nodes, attempts/s
  std::string bottleneck;
};
// The per-job round trip through a node over one transport.
struct round_trip_row {
  std::string transport;        // in-process | plain TCP | TLS
  double p50_ms = 0, p99_ms = 0;
  int jobs = 0;
};
std::string render_cluster_markdown(const std::string& scenario, const std::string& shape,
                                    const std::vector<cluster_row>& rows,
                                    const std::vector<round_trip_row>& round_trips,
                                    const run_stamp& stamp);

// A real-stage scenario with `[bench] nodes` (in-process, then 1, 2, ... local `leap node`
// processes): stamp, shape, one row per count with ratios against in-process, each node's part.
std::string render_real_cluster_markdown(const std::string& scenario, const std::string& shape,
                                         const std::vector<real_cluster_row>& rows,
                                         const run_stamp& stamp);

} // namespace leap::bench
