// `leap serve`: the verification environment and LEAP's group logic over HTTP (docs/serve.md).
// It assembles the same compile and execute pools as `leap check` (local, or the cluster's
// nodes), the environment service actor (actors/env_service.hpp) and the Beast server
// (runtime/serve/http_server.hpp), with --checkpoint DIR also the OpenAI-compatible endpoints
// over that checkpoint's policy (runtime/serve/openai_engine.hpp), prints one ready line, and serves until SIGTERM or SIGINT:
// then it stops accepting, lets the running calls finish (serve.drain_seconds at most), and
// exits 0. Main thread only.
#include "actors/env_service.hpp"
#include "common/host_port.hpp"
#include "common/prometheus.hpp"
#include "leap/build_info.hpp"
#include "policy/text/prompt.hpp"
#include "runtime/pipeline/env_pools.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/options.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/pipeline/services.hpp"
#include "policy/policy_model.hpp"
#include "runtime/serve/http_server.hpp"
#include "runtime/serve/openai_engine.hpp"
#include "runtime/serve/service_bridge.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace leap::runtime {

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

std::chrono::milliseconds ms(double seconds) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(seconds));
}

// `format`: how the environment API's next prompts are written (the served checkpoint's chat
// format with --checkpoint, else policy.chat_format with auto meaning leap).
actors::env_service_options service_options(const services& svc, policy::chat_format format) {
  const auto& cfg = svc.cfg;
  actors::env_service_options o;
  o.rollout = gatekeeper_options_of(cfg, msg::train_mode::async, true).rollout;
  o.estimator = estimator_of(cfg.train);
  o.backend = svc.backend;
  o.compile_workers = cfg.compiler.workers;
  o.exec_workers = cfg.executor.workers;
  o.max_queue = cfg.serve.max_queue;
  o.max_groups = cfg.serve.max_groups;
  o.group_ttl = ms(cfg.serve.group_ttl_seconds);
  // A job waits in its pool's queue, then runs with retries: bounded by the request timeout.
  o.compile_timeout = o.exec_timeout = ms(cfg.serve.request_timeout_seconds);
  auto tasks = svc.tasks;
  o.render_prompt = [tasks, format](const std::string& task, const std::vector<std::string>& codes,
                                    const std::vector<std::string>& feedbacks) {
    return task_prompt(tasks->at(task), codes, feedbacks, format);
  };
  return o;
}

int run_serve(const command_context& ctx) {
  auto& svc = *ctx.svc;
  const auto& cfg = svc.cfg;
  auto given = ctx.args.opt("--listen");
  const std::string where = given ? "--listen" : "serve.listen";
  auto addr = parse_host_port(given ? *given : cfg.serve.listen);
  if (!addr)
    return usage_error(where + ": " + addr.message());
  const char* token_value = std::getenv(cfg.serve.token_env.c_str());
  std::string token = token_value ? token_value : "";
  const bool loopback = is_loopback(addr->host);
  const bool https = !cfg.serve.tls_cert.empty();
  if (!loopback && token.empty())
    return usage_error(where + ": " + addr->text()
                       + " is not a loopback address: clients must send a bearer token; put it "
                         "in the environment variable "
                       + cfg.serve.token_env + " (serve.token_env)");
  if (!loopback && !https)
    std::fprintf(stderr,
                 "leap serve: WARNING: plain HTTP on %s: the bearer token crosses the network in "
                 "clear text unless a TLS reverse proxy is in front (docs/serve.md); set "
                 "serve.tls_cert and serve.tls_key to serve HTTPS\n",
                 addr->text().c_str());

  caf::actor_system_config sys_cfg;
  if (auto r = prepare_actor_system(sys_cfg, cfg); !r)
    return usage_error(r.message());
  caf::actor_system sys{sys_cfg};
  auto pools = spawn_env_pools(sys, svc, compiler_pool_of(cfg), executor_pool_of(cfg));
  if (!pools)
    return usage_error(pools.message());

  auto metrics = std::make_shared<prom::registry>();
  actors::declare_service_metrics(*metrics);
  serve::declare_http_metrics(*metrics);
  serve::declare_bridge_metrics(*metrics);
  serve::declare_openai_metrics(*metrics);

  // --checkpoint DIR: the policy behind /v1/completions, /v1/chat/completions and /v1/models.
  // One LibTorch thread: the compile pool forks, and a multi-threaded BLAS pool deadlocked in
  // OpenBLAS's fork handler when a fork met a sampling call (as in `leap eval`).
  std::unique_ptr<serve::openai_engine> generator;
  if (auto ck = ctx.args.opt("--checkpoint")) {
    policy::set_torch_threads(1);
    serve::openai_engine_options eo;
    eo.checkpoint_dir = *ck;
    eo.max_batch_rows = cfg.serve.max_group_size;
    eo.metrics = metrics;
    eo.chat_format = cfg.policy.chat_format;
    auto e = serve::openai_engine::create(eo);
    if (!e) {
      pools->shutdown();
      std::fprintf(stderr, "leap serve: %s\n", e.message().c_str());
      return exit_failed;
    }
    generator = std::move(*e);
  }
  // Without a checkpoint, auto means leap's own format.
  auto format = generator ? generator->chat_format()
                          : named_chat_format(cfg.policy.chat_format).value_or(policy::chat_format::leap);
  auto opts = service_options(svc, format);
  opts.metrics = metrics;
  auto service = actors::spawn_env_service(sys, opts, svc.tasks, pools->compilers, pools->executors);

  std::atomic<bool> draining{false};
  serve::bridge_options bo;
  bo.max_group_size = cfg.serve.max_group_size;
  bo.max_episodes = static_cast<std::size_t>(cfg.serve.max_groups);
  bo.episode_ttl = ms(cfg.serve.group_ttl_seconds);
  bo.request_timeout = ms(cfg.serve.request_timeout_seconds);
  bo.backend = env::to_string(svc.backend);
  bo.version = build_info::version;
  bo.first_prompt = [format](const env::task_spec& t) { return task_prompt(t, {}, {}, format); };
  bo.draining = [&draining] { return draining.load(); };
  if (generator) {
    auto* g = generator.get();
    bo.openai = [g](serve::http_request req, serve::respond_fn respond) {
      g->handle(req, std::move(respond));
    };
  }

  serve::http_server_options ho;
  ho.listen = *addr;
  ho.threads = cfg.serve.threads;
  ho.max_connections = cfg.serve.max_connections;
  ho.max_body_bytes = static_cast<std::size_t>(cfg.serve.max_body_kb) * 1024;
  ho.max_header_bytes = static_cast<std::size_t>(cfg.serve.max_header_kb) * 1024;
  ho.read_timeout = ms(cfg.serve.read_timeout_seconds);
  ho.idle_timeout = ms(cfg.serve.idle_timeout_seconds);
  ho.token = token;
  ho.tls_cert = cfg.serve.tls_cert;
  ho.tls_key = cfg.serve.tls_key;
  ho.metrics = metrics;
  auto server = serve::http_server::start(
    ho, serve::make_service_handler(sys, service, svc.tasks, metrics, bo));
  if (!server) {
    caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
    pools->shutdown();
    std::fprintf(stderr, "leap serve: %s\n", server.message().c_str());
    return exit_failed;
  }
  auto& srv = **server;
  addr->port = srv.port();
  std::printf("serving on %s://%s: %zu tasks, backend %s, compile %d / execute %d workers%s, "
              "%s%s\n",
              srv.tls() ? "https" : "http", addr->text().c_str(), svc.tasks->size(),
              env::to_string(svc.backend), cfg.compiler.workers, cfg.executor.workers,
              pools->cluster ? " per node (cluster)" : "",
              token.empty() ? "no token" : "bearer token required",
              generator ? (", model " + generator->model_name() + " on /v1/completions and "
                           "/v1/chat/completions").c_str()
                        : "");
  std::fflush(stdout);

  g_stop.store(false);
  auto old_int = std::signal(SIGINT, on_signal);
  auto old_term = std::signal(SIGTERM, on_signal);
  while (!g_stop.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  draining.store(true);
  std::fprintf(stderr, "leap serve: stopping: no new connections; %zu call(s) running\n",
               srv.in_flight());
  srv.stop_accepting();
  auto limit = std::chrono::steady_clock::now() + ms(cfg.serve.drain_seconds);
  while (srv.in_flight() > 0 && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  int rc = exit_ok;
  if (srv.in_flight() > 0) {
    std::fprintf(stderr, "leap serve: %zu call(s) still running after serve.drain_seconds; "
                         "closing them\n",
                 srv.in_flight());
    rc = exit_failed;
  }
  srv.stop();
  generator.reset();
  caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
  pools->shutdown();
  std::fprintf(stderr, "leap serve: stopped after %.0f request(s)\n",
               metrics->total("leap_http_requests_total"));
  return rc;
}

} // namespace

command serve_command() {
  return {{"serve"},
          "[--listen HOST:PORT] [--checkpoint DIR]",
          "serve checks and LEAP groups over HTTP for external trainers\n"
          "(serve.*, docs/serve.md); with --checkpoint also OpenAI-compatible\n"
          "/v1/completions, /v1/chat/completions, /v1/models; SIGTERM stops it",
          command::needs::services, true, false, run_serve};
}

} // namespace leap::runtime
