// Benchmark harness: what cluster nodes say they have done, for the per-node figures of a
// `leap bench` run whose compile and execute stages ran on them (`cluster.nodes`, or the
// `leap node` processes a real-stage scenario's `[bench] nodes` starts). Each node is asked for
// its statistics (actors/node.hpp) over the scenario's transport (TLS when [cluster] names
// certificates) from a short-lived actor system of its own; the figures of a run are the
// difference of the answers before and after it (node_figures_between, results.hpp). Main
// thread of `leap bench`, while no other actor system of the run exists; no CAF here.
#pragma once

#include "bench/pipeline/results.hpp"
#include "runtime/config/config.hpp"

#include <string>
#include <vector>

namespace leap::bench {

// One entry per address, in order: the jobs each node's compile and execute pools have
// completed since it started (and its compile cache hits); a node that cannot be reached or
// does not answer within 10 s has its problem instead.
std::vector<node_figures> ask_nodes(const std::vector<std::string>& nodes,
                                    const config::cluster_section& c);

} // namespace leap::bench
