// bench_serve: a bounded load test of `leap serve` (docs/serve.md). It starts `leap serve` on
// loopback over a fresh build cache, then for 1, 8 and 64 concurrent clients (each its own
// keep-alive connection, Beast's synchronous client) measures checks/s and p50/p99 latency of
// cache-hit checks (the same correct candidate again) and of cold checks (a never-built
// candidate: a fresh comment changes its content address). Side by side in the same run it times
// the in-process evaluator (`leap check`'s path, no HTTP) on the same candidates, and reports
// HTTP's cost as ratios (latency at 1 client, throughput at 8 and 64). Usage:
//   bench_serve [--leap PATH] [--source-dir DIR] [--scale K] [--json FILE]
// (K multiplies request counts; --json also writes the figures to FILE, which
// scripts/bench_tables.py renders as the table of docs/bench/serve.md).
#include "common/fs.hpp"
#include "common/spawn.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>


namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

struct figures {
  double per_second = 0, p50_ms = 0, p99_ms = 0;
  int failed = 0;
};

figures summarise(std::vector<double> ms, double wall_s, int failed) {
  figures f;
  f.failed = failed;
  if (ms.empty())
    return f;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))]; };
  f.p50_ms = at(0.5);
  f.p99_ms = at(0.99);
  f.per_second = static_cast<double>(ms.size()) / wall_s;
  return f;
}

// `clients` threads, each with one keep-alive connection, each sending `per_client` checks made
// by `body(client, i)`.
template <class Body>
figures load(int port, int clients, int per_client, Body body, const char* target = "/v1/check") {
  std::vector<std::vector<double>> lat(static_cast<std::size_t>(clients));
  std::atomic<int> failed{0};
  auto t0 = clock_type::now();
  std::vector<std::thread> ts;
  for (int c = 0; c < clients; ++c)
    ts.emplace_back([&, c] {
      net::io_context ioc;
      beast::tcp_stream stream(ioc);
      beast::error_code ec;
      stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"),
                                            static_cast<unsigned short>(port)),
                     ec);
      if (ec) {
        failed += per_client;
        return;
      }
      beast::flat_buffer buf;
      for (int i = 0; i < per_client; ++i) {
        auto text = body(c, i);
        http::request<http::string_body> req{text.empty() ? http::verb::get : http::verb::post,
                                             target, 11};
        req.set(http::field::host, "127.0.0.1");
        req.set(http::field::content_type, "application/json");
        req.body() = std::move(text);
        req.prepare_payload();
        auto s = clock_type::now();
        http::write(stream, req, ec);
        http::response<http::string_body> res;
        if (!ec)
          http::read(stream, buf, res, ec);
        if (ec || res.result_int() != 200) {
          ++failed;
          if (ec)
            return;
          continue;
        }
        lat[static_cast<std::size_t>(c)].push_back(
          std::chrono::duration<double, std::milli>(clock_type::now() - s).count());
      }
    });
  for (auto& t : ts)
    t.join();
  double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::vector<double> all;
  for (auto& l : lat)
    all.insert(all.end(), l.begin(), l.end());
  return summarise(std::move(all), wall, failed.load());
}

// The in-process evaluator on `n` items per batch of `clients` (what `clients` concurrent HTTP
// clients amount to), `rounds` times.
template <class Source>
figures in_process(leap::runtime::evaluator& ev, int clients, int rounds, Source source) {
  std::vector<double> ms;
  int failed = 0;
  auto t0 = clock_type::now();
  for (int r = 0; r < rounds; ++r) {
    std::vector<leap::runtime::check_item> items;
    for (int c = 0; c < clients; ++c)
      items.push_back({"vector_add", source(c, r), false, false});
    auto s = clock_type::now();
    auto out = ev.evaluate(items);
    double batch = std::chrono::duration<double, std::milli>(clock_type::now() - s).count();
    for (auto& o : out) {
      if (!o || o->v.st != leap::env::status::correct)
        ++failed;
      ms.push_back(batch); // every item of a batch is answered when the batch is
    }
  }
  double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  return summarise(std::move(ms), wall, failed);
}

std::string arg(int argc, char** argv, const std::string& key, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == key)
      return argv[i + 1];
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  const std::string leap_bin = arg(argc, argv, "--leap", LEAP_BINARY);
  const std::string src_dir = arg(argc, argv, "--source-dir", LEAP_SOURCE_DIR);
  const double scale = std::stod(arg(argc, argv, "--scale", "1"));
  const std::string json_path = arg(argc, argv, "--json", "");
  nlohmann::json report{{"backend", "cpu"}, {"task", "vector_add"}, {"scale", scale}};
  auto cache = fs::temp_directory_path() / ("leap-bench-serve-" + std::to_string(::getpid()));
  fs::create_directories(cache);
  auto good = leap::read_file(src_dir + "/tests/env/candidates/vector_add/grid_stride.cu");
  if (!good) {
    std::fprintf(stderr, "bench_serve: %s\n", good.message().c_str());
    return 1;
  }

  // The server, over its own fresh cache.
  std::string out_file = (cache / "serve.out").string();
  std::vector<std::string> args{leap_bin, "--set", "environment.cache_dir=" + cache.string(),
                                "--set", "environment.backend=cpu", "serve", "--listen",
                                "127.0.0.1:0"};
  leap::spawn_spec spec;
  spec.argv = args;
  spec.stdout_path = out_file;
  auto started = leap::spawn_child(spec);
  if (!started) {
    std::fprintf(stderr, "bench_serve: %s\n", started.message().c_str());
    return 1;
  }
  pid_t pid = *started;
  int port = 0;
  for (int i = 0; i < 600 && port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto text = leap::read_file(out_file);
    std::smatch m;
    static const std::regex re("serving on http://127\\.0\\.0\\.1:(\\d+)");
    if (text && std::regex_search(*text, m, re))
      port = std::stoi(m[1].str());
  }
  if (port == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    std::fprintf(stderr, "bench_serve: leap serve did not start\n");
    return 1;
  }

  // The in-process evaluator over the same cache and configuration.
  auto cfg = leap::config::defaults();
  cfg.environment.cache_dir = cache.string();
  (void)leap::config::apply_override(cfg, "environment.backend=cpu");
  auto svc = leap::runtime::make_services(cfg);
  auto ev = svc ? leap::runtime::evaluator::create(**svc)
                : leap::result<std::unique_ptr<leap::runtime::evaluator>>(svc.err());
  if (!ev) {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    std::fprintf(stderr, "bench_serve: %s\n", ev.message().c_str());
    return 1;
  }

  auto body = [](const std::string& src) {
    return nlohmann::json{{"task", "vector_add"}, {"source", src}}.dump();
  };
  std::atomic<unsigned long long> nonce{static_cast<unsigned long long>(::getpid()) << 20};
  auto cold_src = [&](int, int) { return "// cold " + std::to_string(nonce++) + "\n" + *good; };
  auto n = [&](int k) { return std::max(1, static_cast<int>(k * scale)); };
  // Warm: the reference and the hit candidate are built (by both sides' shared cache).
  load(port, 1, 1, [&](int, int) { return body(*good); });
  (*ev)->evaluate({{"vector_add", *good, false, false}});

  std::printf("leap serve load test (backend cpu, compile 2 / execute 2 workers, vector_add)\n");
  // The HTTP layer alone: GET /health on one keep-alive connection.
  auto h = load(port, 1, n(500), [](int, int) { return std::string(); }, "/health");
  std::printf("GET /health, 1 client: %.0f requests/s, p50 %.3f ms, p99 %.3f ms\n", h.per_second,
              h.p50_ms, h.p99_ms);
  report["health"] = {{"requests_per_second", h.per_second}, {"p50_ms", h.p50_ms}, {"p99_ms", h.p99_ms},
                      {"failed", h.failed}};
  std::printf("%-9s %-8s %10s %10s %10s %8s | %12s %10s | %s\n", "checks", "clients", "checks/s",
              "p50 ms", "p99 ms", "failed", "in-proc /s", "in-proc ms", "HTTP vs in-process");
  struct level {
    int clients, http_per_client, inproc_rounds;
  };
  for (bool cold : {false, true})
    for (auto lv : {level{1, n(cold ? 6 : 12), n(cold ? 6 : 12)},
                    level{8, n(cold ? 2 : 4), n(cold ? 2 : 4)}, level{64, n(1), n(1)}}) {
      auto h = cold ? load(port, lv.clients, lv.http_per_client, [&](int c, int i) { return body(cold_src(c, i)); })
                    : load(port, lv.clients, lv.http_per_client, [&](int, int) { return body(*good); });
      auto p = cold ? in_process(**ev, lv.clients, lv.inproc_rounds, cold_src)
                    : in_process(**ev, lv.clients, lv.inproc_rounds, [&](int, int) { return *good; });
      char ratio[96];
      if (lv.clients == 1)
        std::snprintf(ratio, sizeof ratio, "p50 latency x%.2f", h.p50_ms / std::max(1e-9, p.p50_ms));
      else
        std::snprintf(ratio, sizeof ratio, "throughput x%.2f", h.per_second / std::max(1e-9, p.per_second));
      std::printf("%-9s %-8d %10.2f %10.1f %10.1f %8d | %12.2f %10.1f | %s\n",
                  cold ? "cold" : "cache-hit", lv.clients, h.per_second, h.p50_ms, h.p99_ms,
                  h.failed + p.failed, p.per_second, p.p50_ms, ratio);
      std::fflush(stdout);
      report["rows"].push_back({{"checks", cold ? "cold" : "cache hit"}, {"clients", lv.clients},
                                {"http_per_client", lv.http_per_client},
                                {"checks_per_second", h.per_second}, {"p50_ms", h.p50_ms},
                                {"p99_ms", h.p99_ms}, {"failed", h.failed + p.failed},
                                {"in_process_checks_per_second", p.per_second},
                                {"in_process_p50_ms", p.p50_ms}});
    }
  ev->reset();
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  fs::remove_all(cache);
  if (!json_path.empty())
    if (auto w = leap::write_file_atomic(json_path, report.dump(1) + "\n"); !w) {
      std::fprintf(stderr, "bench_serve: %s\n", w.message().c_str());
      return 1;
    }
  return 0;
}
