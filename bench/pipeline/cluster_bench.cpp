// The cluster benchmark (configs/bench/cluster.toml) and `leap bench node`, the worker it runs:
// a node whose compile and execute pools are the scenario's latency models, so a head on this
// 2-core machine can drive several nodes whose capacity is not limited by the cores. For each
// node count of [bench] nodes, `leap bench` starts that many `leap bench node` processes on
// loopback, runs the async mode with generation and the learner as stand-ins in the head, and
// compares attempts/s with the analytic bound of that many nodes; then it probes the per-job
// round trip through a node (a zero-service-time job) in-process, over plain TCP and over TLS.
#include "actors/node.hpp"
#include "bench/pipeline/command.hpp"
#include "bench/pipeline/latency_pools.hpp"
#include "bench/pipeline/node_process.hpp"
#include "bench/pipeline/report_markdown.hpp"
#include "bench/pipeline/results.hpp"
#include "bench/pipeline/run_mode.hpp"
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "messages/error_text.hpp"
#include "runtime/cluster/node_host.hpp"
#include "runtime/cluster/transport.hpp"
#include "runtime/commands/table.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>


#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>


namespace leap::bench {

namespace {

std::shared_ptr<latency_context> node_context(const scenario& sc) {
  auto ctx = std::make_shared<latency_context>();
  ctx->timer = std::make_shared<deadline_timer>();
  ctx->time_scale = sc.time_scale;
  ctx->seed = sc.seed;
  ctx->task_names = sc.task_names();
  ctx->success = sc.task_success();
  return ctx;
}

// A node over the scenario's latency-model pools (they hold every "build": there are none).
actors::node_options latency_node(caf::actor_system& sys, const scenario& sc,
                                  std::shared_ptr<latency_context> ctx) {
  actors::node_options no;
  no.info.identity = msg::this_build_identity();
  no.info.backend = env::backend::cpu;
  no.holds_build = [](const std::string&) { return true; };
  actors::pool_options c, e;
  c.workers = static_cast<std::size_t>(sc.cfg.compiler.workers);
  e.workers = static_cast<std::size_t>(sc.cfg.executor.workers);
  no.compilers = spawn_latency_compiler_pool(sys, c, sc.compile.dist, ctx);
  no.executors = spawn_latency_executor_pool(sys, e, sc.execute.dist, ctx);
  no.info.compile_workers = static_cast<std::uint32_t>(c.workers);
  no.info.execute_workers = static_cast<std::uint32_t>(e.workers);
  return no;
}

int run_bench_node(const runtime::command_context& ctx) {
  const auto& a = ctx.args;
  auto sc = load_scenario_with(a.config_file, a.sets);
  if (!sc)
    return runtime::usage_error(sc.message());
  auto addr = parse_host_port(a.opt("--listen").value_or("127.0.0.1:0"));
  if (!addr)
    return runtime::usage_error("--listen: " + addr.message());
  auto plain = runtime::check_plain_allowed(sc->cfg.cluster, *addr, "--listen");
  if (!plain)
    return runtime::usage_error(plain.message());
  if (*plain)
    runtime::node_log_line("leap bench node", **plain);
  caf::actor_system_config cfg;
  msg::register_message_types(cfg);
  if (auto r = runtime::configure_transport(cfg, sc->cfg.cluster); !r)
    return runtime::usage_error(r.message());
  caf::actor_system sys{cfg};
  auto no = latency_node(sys, *sc, node_context(*sc));
  runtime::node_host_options ho;
  ho.listen = *addr;
  ho.tls = runtime::uses_tls(sc->cfg.cluster);
  ho.what = "bench node";
  ho.log = [](const std::string& l) { runtime::node_log_line("leap bench node", l); };
  auto details = "compile " + std::to_string(no.info.compile_workers) + ", execute "
                 + std::to_string(no.info.execute_workers) + " (latency models of "
                 + sc->name + ", " + (ho.tls ? "TLS" : "plain TCP") + ")";
  int rc = runtime::host_node_until_signal(
    sys, ho,
    [&](const std::string& name) {
      no.info.name = name;
      return actors::spawn_node(sys, no);
    },
    details);
  for (auto h : {caf::actor_cast<caf::actor>(no.compilers), caf::actor_cast<caf::actor>(no.executors)})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  return rc;
}

// One `leap bench node` child on loopback, over the scenario file with the same --set (and
// `extra` ones); stopped when dropped (bench/pipeline/node_process.hpp).
std::unique_ptr<node_process> bench_node(const bench_args& args, const std::string& log,
                                         const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"/proc/self/exe", "--config", args.scenario_path};
  for (auto& s : args.sets)
    argv.insert(argv.end(), {"--set", s});
  for (auto& s : extra)
    argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), {"bench", "node", "--listen", "127.0.0.1:0"});
  return std::make_unique<node_process>(std::move(argv), log);
}

constexpr std::chrono::seconds bench_node_start{30};

struct overhead_figures {
  std::string transport;
  double p50_ms = 0, p99_ms = 0;
  int jobs = 0;
};

// `jobs` zero-service-time compile jobs (references complete at once in the latency model),
// one after another, to `node`; round trips in milliseconds.
result<overhead_figures> probe(caf::actor_system& sys, const msg::node_actor& node, int jobs,
                               const std::string& transport) {
  caf::scoped_actor self{sys};
  std::vector<double> ms;
  std::string source(2048, 'x'); // a typical candidate's size
  for (int i = 0; i < jobs; ++i) {
    msg::compile_request req{static_cast<std::uint64_t>(i + 1), "probe", source,
                             env::backend::cpu, true};
    auto t0 = std::chrono::steady_clock::now();
    std::optional<std::string> failure;
    self->request(node, std::chrono::seconds(10), msg::compile_atom_v, req)
      .receive([](msg::compile_reply&) {},
               [&](caf::error& e) { failure = msg::error_text(e, sys); });
    if (failure)
      return make_error(transport + " probe: " + *failure);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return overhead_figures{transport, percentile(ms, 0.5), percentile(ms, 0.99), jobs};
}

// Test certificates made by the openssl CLI (a CA and one certificate each side, for the
// loopback address the bench dials: the head checks the name, runtime/cluster/tls_names.hpp).
result<config::cluster_section> make_test_pki(const std::string& dir, const std::string& who) {
  auto sh = [&](const std::string& cmd) {
    return std::system(("cd " + dir + " && " + cmd + " >/dev/null 2>&1").c_str()) == 0;
  };
  auto write_ext = [&] { // closed before openssl reads it
    std::ofstream out(dir + "/" + who + ".ext");
    out << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    out.close();
    return static_cast<bool>(out);
  };
  if (!std::ifstream(dir + "/ca.pem")
      && !sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
             "-subj /CN=leap-bench-ca"))
    return make_error("the openssl CLI could not make a test CA");
  if (!sh("openssl req -newkey rsa:2048 -nodes -keyout " + who + ".key -out " + who
          + ".csr -subj /CN=" + who)
      || !write_ext()
      || !sh("openssl x509 -req -in " + who + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out " + who + ".pem -days 2 -extfile " + who + ".ext"))
    return make_error("the openssl CLI could not make a test certificate");
  config::cluster_section c;
  c.tls_cert = dir + "/" + who + ".pem";
  c.tls_key = dir + "/" + who + ".key";
  c.tls_ca = dir + "/ca.pem";
  return c;
}

// In-process (no transport), plain TCP and TLS round trips of a zero-service-time job.
std::vector<overhead_figures> middleman_overhead(const scenario& sc, const bench_args& args,
                                                 const std::string& out_dir) {
  std::vector<overhead_figures> out;
  auto report = [&](result<overhead_figures> r, const std::string& what) {
    if (r)
      out.push_back(*r);
    else
      std::fprintf(stderr, "  overhead (%s): %s\n", what.c_str(), r.message().c_str());
  };
  {
    caf::actor_system_config cfg;
    msg::register_message_types(cfg);
    caf::actor_system sys{cfg};
    auto no = latency_node(sys, sc, node_context(sc));
    auto node = actors::spawn_node(sys, no);
    report(probe(sys, node, sc.overhead_jobs, "in-process"), "in-process");
    for (auto h : {caf::actor_cast<caf::actor>(node), caf::actor_cast<caf::actor>(no.compilers),
                   caf::actor_cast<caf::actor>(no.executors)})
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }
  auto pki = out_dir + "/pki";
  std::error_code ec;
  std::filesystem::create_directories(pki, ec);
  for (bool tls : {false, true}) {
    std::vector<std::string> extra;
    config::cluster_section head;
    if (tls) {
      auto n = make_test_pki(pki, "node");
      auto h = make_test_pki(pki, "head");
      if (!n || !h) {
        std::fprintf(stderr, "  overhead (TLS): %s\n", (!n ? n : h).message().c_str());
        continue;
      }
      extra = {"cluster.tls_cert=" + n->tls_cert, "cluster.tls_key=" + n->tls_key,
               "cluster.tls_ca=" + n->tls_ca};
      head = *h;
    }
    auto child = bench_node(args, out_dir + (tls ? "/probe-node-tls" : "/probe-node-plain"), extra);
    auto addr = child->address(bench_node_start);
    if (!addr) {
      report(addr.err(), tls ? "TLS" : "plain TCP");
      continue;
    }
    caf::actor_system_config cfg;
    msg::register_message_types(cfg);
    if (auto r = runtime::configure_transport(cfg, head); !r) {
      report(r.err(), "TLS");
      continue;
    }
    caf::actor_system sys{cfg};
    auto hp = parse_host_port(*addr);
    auto node = runtime::node_connector(sys, tls)(hp->host, hp->port);
    if (!node) {
      report(node.err(), tls ? "TLS" : "plain TCP");
      continue;
    }
    report(probe(sys, *node, sc.overhead_jobs, tls ? "TLS" : "plain TCP"), "probe");
  }
  return out;
}

} // namespace

int run_cluster_bench(const scenario& sc, const bench_args& args, const std::string& out_dir,
                      const run_stamp& stamp) {
  std::fprintf(stderr, "leap bench %s: the async mode with compile and execute on 1..%d `leap "
                       "bench node` processes (compile %d x %s s, execute %d x %s s per node)\n",
               sc.name.c_str(), sc.nodes.back(), sc.cfg.compiler.workers,
               format_fixed(sc.compile.dist.mean, 2).c_str(), sc.cfg.executor.workers,
               format_fixed(sc.execute.dist.mean, 2).c_str());
  struct row {
    int nodes;
    mode_figures f;
    bound_figures bound;
  };
  std::vector<row> rows;
  for (int n : sc.nodes) {
    std::vector<std::unique_ptr<node_process>> children;
    std::vector<std::string> addrs;
    for (int i = 0; i < n; ++i) {
      children.push_back(
        bench_node(args, out_dir + "/node-" + std::to_string(n) + "-" + std::to_string(i), {}));
      auto addr = children.back()->address(bench_node_start);
      if (!addr) {
        std::fprintf(stderr, "leap bench: %s\n", addr.message().c_str());
        return 1;
      }
      addrs.push_back(*addr);
    }
    auto on_step = [n](int k, int total, double t) {
      if (k % 4 == 0 || k == total)
        std::fprintf(stderr, "  %d node(s): step %d/%d at %.1f s\n", n, k, total, t);
    };
    // Each count runs train.steps x nodes steps: about the same time at every size, so the
    // ramp-up and the drain at the end weigh the same in every row.
    auto sized = sc;
    sized.cfg.train.steps = sc.cfg.train.steps * std::max(n, 1);
    auto r = run_bench_mode(sized, bench_mode::async, nullptr, on_step, addrs);
    if (!r || r->failure) {
      std::fprintf(stderr, "leap bench: %d node(s): %s\n", n,
                   (!r ? r.message() : *r->failure).c_str());
      return 1;
    }
    auto f = figures_of(*r);
    nominal_service nom;
    nom.generate = sc.generate.dist.mean;
    nom.compile = sc.compile.dist.mean;
    nom.execute = sc.execute.dist.mean;
    nom.learner_step = sc.learner_seconds;
    auto b = analytic_bound(nom, f, static_cast<std::uint32_t>(sc.cfg.train.generators),
                            static_cast<std::uint32_t>(sc.cfg.compiler.workers * std::max(n, 1)),
                            static_cast<std::uint32_t>(sc.cfg.executor.workers * std::max(n, 1)));
    rows.push_back({n, f, b});
  }
  std::vector<overhead_figures> overhead;
  if (sc.overhead_jobs > 0)
    overhead = middleman_overhead(sc, args, out_dir);

  std::ofstream csv(out_dir + "/cluster.csv");
  csv << "nodes,attempts_per_second,bound_attempts_per_second,of_bound,vs_one_node,bottleneck\n";
  std::printf("\n%-10s %12s %12s %9s %12s  %s\n", "nodes", "attempts/s", "bound", "of bound",
              "vs 1 node", "bottleneck");
  std::vector<cluster_row> md_rows;
  std::vector<round_trip_row> md_trips;
  double base = 0;
  for (auto& r : rows)
    if (r.nodes == 1)
      base = r.f.attempts_per_second;
  for (auto& r : rows) {
    double of_bound = r.bound.attempts_per_second > 0
                        ? r.f.attempts_per_second / r.bound.attempts_per_second : 0;
    double scale = base > 0 ? r.f.attempts_per_second / base : 0;
    std::printf("%-10s %12.2f %12.2f %9.2f %11.2fx  %s\n",
                r.nodes == 0 ? "in-process" : std::to_string(r.nodes).c_str(), r.f.attempts_per_second,
                r.bound.attempts_per_second, of_bound, scale, r.bound.bottleneck.c_str());
    csv << r.nodes << "," << r.f.attempts_per_second << "," << r.bound.attempts_per_second << ","
        << of_bound << "," << scale << "," << r.bound.bottleneck << "\n";
    md_rows.push_back({r.nodes, r.f.attempts_per_second, r.bound.attempts_per_second, r.bound.bottleneck});
  }
  if (!overhead.empty()) {
    std::printf("\nper-job round trip through a node (zero-service-time compile job, 2 KiB "
                "source, %d jobs one after another):\n", sc.overhead_jobs);
    for (auto& o : overhead) {
      std::printf("  %-11s p50 %.3f ms  p99 %.3f ms\n", o.transport.c_str(), o.p50_ms, o.p99_ms);
      md_trips.push_back({o.transport, o.p50_ms, o.p99_ms, o.jobs});
    }
  }
  const std::string shape =
    "the async mode with compile (" + std::to_string(sc.cfg.compiler.workers) + " x mean "
    + format_fixed(sc.compile.dist.mean, 2) + " s) and execute (" + std::to_string(sc.cfg.executor.workers)
    + " x mean " + format_fixed(sc.execute.dist.mean, 2) + " s) on each `leap bench node` process; "
    + "generation (" + std::to_string(sc.cfg.train.generators) + " x mean "
    + format_fixed(sc.generate.dist.mean, 2) + " s) and the learner (" + format_fixed(sc.learner_seconds, 2)
    + " s/step) in the head; " + std::to_string(sc.cfg.train.steps)
    + " x nodes steps per row; time scale " + format_fixed(sc.time_scale, 2) + " (figures in scenario seconds)";
  auto md = out_dir + "/" + sc.name + ".md";
  if (auto w = write_file_atomic(md, render_cluster_markdown(sc.name, shape, md_rows, md_trips, stamp)); !w)
    std::fprintf(stderr, "leap: %s\n", w.message().c_str());
  else
    std::printf("Markdown: %s\n", md.c_str());
  std::printf("(figures in scenario seconds; time scale %s; CSV in %s/cluster.csv)\n",
              format_fixed(sc.time_scale, 2).c_str(), out_dir.c_str());
  return 0;
}

namespace {

const runtime::command_registrar bench_node_verb{runtime::command{
  {"bench", "node"},
  "--config configs/bench/S.toml [--listen HOST:PORT]",
  "a cluster node whose compile and execute pools are the\nscenario's latency models (the "
  "cluster benchmark starts these)",
  runtime::command::needs::nothing, false, false, run_bench_node}};

} // namespace

} // namespace leap::bench
