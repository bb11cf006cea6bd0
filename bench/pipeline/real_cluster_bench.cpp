// The real stages on local cluster nodes: a real-stage scenario (compile "nvcc", execute
// "backend") with `[bench] nodes` runs the async mode once per count, with compile and execute
// in this process (count 0) or on that many `leap node` processes that `leap bench` starts on
// loopback, each over a fresh build cache, with the scenario's ordinary sections (environment,
// compiler, executor, node, cluster TLS). The head reaches them through `cluster.nodes`, the
// same path as `leap train` (bench/pipeline/run_mode.cpp); every row has the same steps, seeds
// and draws. It prints attempts/s against in-process, the jobs each node completed and the CPU
// seconds per attempt of the head and of the nodes, and writes CSV and Markdown.
#include "bench/pipeline/command.hpp"
#include "bench/pipeline/node_process.hpp"
#include "bench/pipeline/report.hpp"
#include "bench/pipeline/report_markdown.hpp"
#include "bench/pipeline/run_mode.hpp"
#include "common/fs.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace leap::bench {

namespace {

namespace fs = std::filesystem;

// A `leap node` starts its services (task suite, toolchain probe) before it listens.
constexpr std::chrono::seconds node_start_limit{120};

// The configuration of local node `i` of `count`: the scenario's sections with a fresh build
// cache of its own, listening on a free loopback port, heading no cluster itself.
config::leap_config node_config(const scenario& sc, const std::string& cache_dir) {
  auto c = sc.cfg;
  c.environment.cache_dir = cache_dir;
  c.environment.work_dir.clear();
  c.node.listen = "127.0.0.1:0";
  c.node.join.clear();
  c.cluster.nodes.clear();
  c.cluster.listen.clear();
  c.cluster.local_roles.clear();
  return c;
}

struct local_nodes {
  std::vector<std::unique_ptr<node_process>> procs;
  std::vector<std::string> addrs, caches;
  ~local_nodes() {
    procs.clear(); // stopped and waited for before their caches go
    std::error_code ec;
    for (auto& c : caches)
      fs::remove_all(c, ec);
  }
};

// Starts `count` `leap node` processes and waits until each is ready.
result<void> start_nodes(const scenario& sc, int count, const std::string& out_dir,
                         local_nodes& out) {
  for (int i = 0; i < count; ++i) {
    const std::string base = out_dir + "/node-" + std::to_string(count) + "-" + std::to_string(i);
    auto cache = base + "-cache";
    std::error_code ec;
    fs::remove_all(cache, ec);
    out.caches.push_back(cache);
    auto conf = base + ".toml";
    if (auto w = write_file_atomic(conf, config::to_toml(node_config(sc, cache))); !w)
      return w.err();
    out.procs.push_back(std::make_unique<node_process>(
      std::vector<std::string>{"/proc/self/exe", "--config", conf, "node", "--listen",
                               "127.0.0.1:0"},
      base));
  }
  for (auto& p : out.procs) { // they start side by side
    auto addr = p->address(node_start_limit);
    if (!addr)
      return make_error("leap node: " + addr.message());
    out.addrs.push_back(*addr);
  }
  return {};
}

} // namespace

int run_real_cluster_bench(const scenario& sc, const bench_args& args, const std::string& out_dir,
                           const run_stamp& stamp) {
  if (!sc.cfg.cluster.nodes.empty() || !sc.cfg.cluster.listen.empty()) {
    std::cerr << "leap: " << sc.path << ": bench.nodes starts its own `leap node` processes on "
              << "loopback, while cluster.nodes and cluster.listen name nodes that run already: "
              << "set bench.nodes to measure local nodes, or cluster.nodes to run the scenario's "
              << "modes on yours\n";
    return 2;
  }
  const std::string shape = scenario_shape(sc);
  std::fprintf(stderr, "leap bench %s: the async mode with compile and execute in this process "
                       "(0) or on local `leap node` processes, per count of bench.nodes: %s\n",
               sc.name.c_str(), shape.c_str());
  std::vector<real_cluster_row> rows;
  for (int n : sc.nodes) {
    local_nodes nodes;
    scenario row_sc = sc;
    if (n > 0) {
      std::fprintf(stderr, "  starting %d `leap node` process(es)\n", n);
      if (auto r = start_nodes(sc, n, out_dir, nodes); !r) {
        std::cerr << "leap bench: " << n << " node(s): " << r.message() << "\n";
        return 1;
      }
      row_sc.cfg.cluster.nodes = nodes.addrs;
      // The head generates (the nodes compile and execute) unless the scenario's nodes do.
      const auto& roles = sc.cfg.node.roles;
      if (sc.generate.real && sc.cfg.cluster.local_roles.empty()
          && std::find(roles.begin(), roles.end(), config::node_role::generate) == roles.end())
        row_sc.cfg.cluster.local_roles = {config::node_role::generate};
    }
    std::vector<double> cpu_before;
    for (auto& p : nodes.procs)
      cpu_before.push_back(p->cpu_seconds());
    const std::string label = n == 0 ? "in-process" : std::to_string(n) + " node(s)";
    std::fprintf(stderr, "  %s:\n", label.c_str());
    auto r = run_scenario_mode(row_sc, bench_mode::async, out_dir, true);
    if (!r || r->failure) {
      std::cerr << "leap bench: " << label << ": " << (!r ? r.message() : *r->failure) << "\n";
      return 1;
    }
    real_cluster_row row;
    row.nodes = n;
    if (n > 0) {
      double total = 0;
      bool all = true;
      for (std::size_t i = 0; i < nodes.procs.size(); ++i) {
        double now = nodes.procs[i]->cpu_seconds();
        double used = now >= 0 && cpu_before[i] >= 0 ? now - cpu_before[i] : -1;
        if (used < 0)
          all = false;
        else
          total += used;
        for (auto& f : r->nodes)
          if (f.node == nodes.addrs[i])
            f.cpu_seconds = used;
      }
      row.nodes_cpu_seconds = all ? total : -1;
    }
    row.async = figures_of(*r);
    rows.push_back(std::move(row));
  }

  std::cout << "scenario " << sc.name << ": " << shape << "\n\n" << render_real_cluster_table(rows);
  auto csv = (fs::path(out_dir) / (sc.name + ".csv")).string();
  if (auto w = write_file_atomic(csv, render_real_cluster_csv(sc.name, rows)); !w)
    std::cerr << "leap: " << w.message() << "\n";
  else
    std::cout << "CSV: " << csv << "\n";
  auto md = (fs::path(out_dir) / (sc.name + ".md")).string();
  if (auto w = write_file_atomic(md, render_real_cluster_markdown(sc.name, shape, rows, stamp)); !w)
    std::cerr << "leap: " << w.message() << "\n";
  else
    std::cout << "Markdown: " << md << "\n";
  if (args.json)
    std::cout << render_real_cluster_json(sc.name, shape, rows) << std::endl;
  return 0;
}

} // namespace leap::bench
