// Message round trips between CAF actors, in-process ("local": one actor system, no
// serialisation) and over the loopback middleman ("middleman": a second actor system in this
// process connects to the first on 127.0.0.1 through caf::io, so every message is serialised
// and crosses a TCP socket). Payloads: a small (atom, int32) message, a compile request with a
// 2 KB CUDA source (small compile_reply back), and a generate request answered by a
// generate_reply of 8 samples x 300 tokens with log-probs (about 19 KB of data).
// Request/response: one blocking request from a scoped_actor per iteration (time = one round
// trip). Ping-pong: two event-based actors bounce fire-and-forget (atom, int32) messages; one
// iteration is one round trip (two messages). Local and middleman run side by side.
#include "messages/type_ids.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using go_atom = caf::atom_constant<caf::atom("go")>;
using leap::msg::compile_atom;
using leap::msg::done_atom;
using leap::msg::generate_atom;

// Never wait forever on a remote request (notes/caf-0.17.md).
constexpr auto k_timeout = std::chrono::seconds(10);
constexpr int k_samples = 8;
constexpr int k_tokens = 300;

std::string cuda_source(std::size_t bytes) {
  static const char* unit =
    "__global__ void row_softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {\n"
    "  extern __shared__ float buf[];\n"
    "  int r = blockIdx.x; if (r >= rows) return;\n"
    "  float m = -INFINITY;\n"
    "  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[r * cols + c]);\n"
    "  buf[threadIdx.x] = m; __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
    "    if (threadIdx.x < s) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + s]);\n"
    "    __syncthreads();\n"
    "  }\n"
    "}\n";
  std::string s;
  while (s.size() < bytes) s += unit;
  s.resize(bytes);
  return s;
}

leap::msg::compile_request make_compile_request() {
  leap::msg::compile_request r;
  r.id = 17;
  r.task = "softmax_rows";
  r.source = cuda_source(2048);
  r.backend = leap::env::backend::cpu;
  return r;
}

leap::msg::generate_request make_generate_request() {
  leap::msg::generate_request r;
  r.id = 5;
  r.group_id = 3;
  r.prompts.assign(1, std::vector<int>(250, 1234));
  r.samples_per_prompt = k_samples;
  r.max_new_tokens = k_tokens;
  return r;
}

leap::msg::generate_reply make_generate_reply() {
  leap::msg::generate_reply r;
  r.id = 5;
  r.policy_version = 12;
  r.seconds = 1.5;
  for (int s = 0; s < k_samples; ++s) {
    leap::msg::generated g;
    for (int t = 0; t < k_tokens; ++t) {
      g.tokens.push_back((s * 7919 + t * 104729) % 4096);
      g.logprobs.push_back(-0.001f * static_cast<float>(t % 97));
    }
    g.finish = "eos";
    r.samples.push_back(std::move(g));
  }
  return r;
}

// The far end of every round trip: answers each request (or async message: the reply then goes
// back to the sender as an ordinary message).
caf::behavior echo(caf::event_based_actor*) {
  auto gen_reply = std::make_shared<const leap::msg::generate_reply>(make_generate_reply());
  return {
    [](ping_atom, std::int32_t x) { return x + 1; },
    [](compile_atom, const leap::msg::compile_request& r) {
      leap::msg::compile_reply rep;
      rep.id = r.id;
      rep.status = leap::env::build_status::ok;
      rep.key = "3f2a9c41d07e5b8a";
      rep.stage = "g++";
      rep.seconds = 1.2;
      rep.key = "3f2a9c41d0e8b7a6";
      return rep;
    },
    [gen_reply](generate_atom, const leap::msg::generate_request&) { return *gen_reply; },
  };
}

// Ping-pong driver: (go, n, waiter) starts n round trips with `peer`; each int32 coming back
// from the peer triggers the next ping; after the last one `waiter` gets `done`.
struct pinger_state {
  caf::actor waiter;
  std::int32_t left = 0;
};

caf::behavior pinger(caf::stateful_actor<pinger_state>* self, caf::actor peer) {
  return {
    [=](go_atom, std::int32_t n, const caf::actor& waiter) {
      self->state.waiter = waiter;
      self->state.left = n;
      self->send(peer, ping_atom::value, n);
    },
    [=](std::int32_t x) {
      if (--self->state.left > 0) {
        self->send(peer, ping_atom::value, x);
      } else {
        self->send(self->state.waiter, done_atom::value);
        self->state.waiter = nullptr;
      }
    },
  };
}

// Arguments Google Benchmark left over go to CAF (e.g. --scheduler.max-threads=2 or
// --work-stealing.moderate-sleep-duration=0us: with CAF's default 50 us sleep between polls
// of an idle worker, that sleep dominates a local request's latency).
int g_argc = 0;
char** g_argv = nullptr;
std::string g_config_error;

caf::actor_system_config& configured(caf::actor_system_config& cfg) {
  std::istringstream none; // do not read ./caf-application.ini
  if (auto err = cfg.parse(g_argc, g_argv, none)) g_config_error = caf::to_string(err);
  leap::msg::register_message_types(cfg);
  cfg.load<caf::io::middleman>();
  return cfg;
}

// Server system (publishes an echo actor on 127.0.0.1) and client system (runs the benchmark
// loops, holds a local echo actor and the proxy of the remote one). Torn down in main.
struct bench_env {
  caf::actor_system_config server_cfg;
  caf::actor_system server;
  caf::actor_system_config client_cfg;
  caf::actor_system client;
  caf::actor remote_echo_impl; // lives in `server`
  caf::actor local_echo;       // lives in `client`
  caf::actor remote_echo;      // proxy in `client`
  std::uint16_t port = 0;
  std::string error;

  bench_env() : server(configured(server_cfg)), client(configured(client_cfg)) {
    remote_echo_impl = server.spawn(echo);
    local_echo = client.spawn(echo);
    auto p = server.middleman().publish(remote_echo_impl, 0, "127.0.0.1");
    if (!p) {
      error = "publish failed: " + server.render(p.error());
      return;
    }
    port = *p;
    auto r = client.middleman().remote_actor("127.0.0.1", port);
    if (!r) {
      error = "remote_actor failed: " + client.render(r.error());
      return;
    }
    remote_echo = *r;
  }

  void shutdown() {
    caf::anon_send_exit(local_echo, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(remote_echo_impl, caf::exit_reason::user_shutdown);
    local_echo = nullptr;
    remote_echo = nullptr;
    remote_echo_impl = nullptr;
  }
};

bench_env* g_env = nullptr;

const caf::actor& target(bool remote) { return remote ? g_env->remote_echo : g_env->local_echo; }

void fail(benchmark::State& state, caf::actor_system& sys, const caf::error& e) {
  state.SkipWithError(sys.render(e).c_str());
}

void bm_small(benchmark::State& state, bool remote) {
  caf::scoped_actor self{g_env->client};
  const caf::actor& dst = target(remote);
  std::int32_t x = 0;
  bool ok = true;
  for (auto _ : state) {
    self->request(dst, k_timeout, ping_atom::value, x)
      .receive([&](std::int32_t y) { x = y; },
               [&](caf::error& e) { ok = false; fail(state, g_env->client, e); });
    if (!ok) break;
  }
  state.SetItemsProcessed(state.iterations());
}

void bm_compile(benchmark::State& state, bool remote) {
  caf::scoped_actor self{g_env->client};
  const caf::actor& dst = target(remote);
  const auto req = make_compile_request();
  bool ok = true;
  for (auto _ : state) {
    self->request(dst, k_timeout, compile_atom::value, req)
      .receive([&](const leap::msg::compile_reply& r) { benchmark::DoNotOptimize(r.id); },
               [&](caf::error& e) { ok = false; fail(state, g_env->client, e); });
    if (!ok) break;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(req.source.size()));
  state.counters["source_bytes"] = static_cast<double>(req.source.size());
}

void bm_generate(benchmark::State& state, bool remote) {
  caf::scoped_actor self{g_env->client};
  const caf::actor& dst = target(remote);
  const auto req = make_generate_request();
  bool ok = true;
  std::size_t tokens = 0;
  for (auto _ : state) {
    self->request(dst, k_timeout, generate_atom::value, req)
      .receive([&](const leap::msg::generate_reply& r) { tokens = r.samples.size() * r.samples[0].tokens.size(); },
               [&](caf::error& e) { ok = false; fail(state, g_env->client, e); });
    if (!ok) break;
  }
  state.SetItemsProcessed(state.iterations());
  // Token ids + log-probs of the reply: 8 bytes per token.
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(tokens) * 8);
  state.counters["reply_tokens"] = static_cast<double>(tokens);
}

// Fire-and-forget: a pinger in the client system bounces `hops` messages off the echo actor.
void bm_ping_pong(benchmark::State& state, bool remote) {
  caf::scoped_actor self{g_env->client};
  auto p = g_env->client.spawn(pinger, target(remote));
  const auto hops = static_cast<std::int32_t>(state.range(0));
  bool ok = true;
  for (auto _ : state) {
    self->send(p, go_atom::value, hops, caf::actor_cast<caf::actor>(self));
    self->receive([](done_atom) {},
                  caf::after(k_timeout) >> [&] {
                    ok = false;
                    state.SkipWithError("ping-pong timed out");
                  });
    if (!ok) break;
  }
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  state.SetItemsProcessed(state.iterations() * hops);
  // Seconds per round trip (the iteration time covers `hops` of them).
  state.counters["per_round_trip"] = benchmark::Counter(
    static_cast<double>(hops), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  g_argc = argc;
  g_argv = argv;
  {
    bench_env env;
    if (!g_config_error.empty()) env.error = "bad CAF option: " + g_config_error;
    if (!env.error.empty()) {
      std::fprintf(stderr, "bench_messaging: %s\n", env.error.c_str());
      env.shutdown();
      return 1;
    }
    g_env = &env;
    for (bool remote : {false, true}) {
      const std::string where = remote ? "middleman" : "local";
      // Wall-clock time: the work runs on CAF's threads, not on the benchmark's.
      benchmark::RegisterBenchmark(("request_small/" + where).c_str(), bm_small, remote)->UseRealTime();
      benchmark::RegisterBenchmark(("request_compile_2kb/" + where).c_str(), bm_compile, remote)->UseRealTime();
      benchmark::RegisterBenchmark(("request_generate_8x300/" + where).c_str(), bm_generate, remote)
        ->UseRealTime();
      benchmark::RegisterBenchmark(("ping_pong_small/" + where).c_str(), bm_ping_pong, remote)
        ->ArgName("hops")
        ->Arg(remote ? 100 : 1000)
        ->UseRealTime();
    }
    benchmark::RunSpecifiedBenchmarks();
    env.shutdown();
    g_env = nullptr;
  } // client, then server system: ~actor_system waits for their actors
  benchmark::Shutdown();
  return 0;
}
