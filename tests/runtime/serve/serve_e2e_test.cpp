// `leap serve` end to end: a live server process on loopback (real nvcc + the CPU emulation)
// driven over HTTP.
//  - every endpoint answers; each bundled candidate's verdict equals the in-process evaluator's
//    (`leap check`: status, reason, max error, mismatches; timings and `cached` excluded);
//  - groups and turns over HTTP (idempotent retry, 409, 404, 400 naming the field);
//  - hostile HTTP: malformed, oversized, huge headers, truncated, slow (a byte at a time) and
//    64 concurrent clients: every answer is a 4xx or a verdict, the server stays up, and a second
//    identical round of load grows its RSS by less than 20 MB;
//  - a bearer token (401 without it), and no start off loopback without one;
//  - SIGTERM: the running call still gets its verdict, then the server exits 0;
//  - the Python client (tests/clients/python/leap_env_test.py) over HTTPS with a token, against a
//    server whose tiny queue makes it retry 429s.
#include "common/fs.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"
#include "tests/runtime/cluster/leap_process.hpp"
#include "tests/runtime/serve/http_client.hpp"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

using namespace leap;
using namespace leap::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("leap-serve-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string check_body(const std::string& task, const std::string& src) {
  return json{{"task", task}, {"source", src}}.dump();
}

// A /proc/PID/status figure in KiB: VmHWM (peak RSS) or VmRSS.
long status_kb(pid_t pid, const std::string& key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0)
      return std::atol(line.c_str() + key.size() + 1);
  return 0;
}

struct server {
  std::unique_ptr<leap_process> proc;
  int port = 0;
  std::string dir;

  // Starts `leap serve` with these --set overrides (on top of the test defaults) and waits for
  // its ready line.
  bool start(const std::string& name, std::vector<std::string> sets,
             std::vector<std::string> env = {}) {
    dir = temp_dir(name);
    std::vector<std::string> args{LEAP_BINARY};
    // The work directory inside the test's own: nothing is left in /tmp even if the server
    // has to be killed.
    std::vector<std::string> all{"environment.cache_dir=" LEAP_TEST_CACHE_DIR,
                                 "environment.work_dir=" + dir + "/work",
                                 "environment.backend=cpu", "serve.listen=127.0.0.1:0",
                                 "serve.read_timeout_seconds=2", "serve.idle_timeout_seconds=2",
                                 "serve.max_body_kb=64"};
    all.insert(all.end(), sets.begin(), sets.end());
    for (auto& s : all) {
      args.push_back("--set");
      args.push_back(s);
    }
    args.push_back("serve");
    proc = std::make_unique<leap_process>(args, dir + "/serve", env);
    auto p = proc->wait_for("serving on https?://127\\.0\\.0\\.1:(\\d+)", std::chrono::seconds(60));
    if (!p)
      return false;
    port = std::stoi(*p);
    return true;
  }
  ~server() {
    if (proc && !proc->exited(std::chrono::milliseconds(0))) {
      proc->kill(SIGTERM); // drains and exits
      if (!proc->exited(std::chrono::seconds(30)))
        proc->kill(SIGKILL);
    }
    if (!dir.empty())
      fs::remove_all(dir);
  }
};

std::vector<std::pair<std::string, std::string>> bundled_candidates() {
  std::vector<std::pair<std::string, std::string>> out; // task, file
  for (auto& t : fs::directory_iterator(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates"))
    for (auto& f : fs::directory_iterator(t.path()))
      out.emplace_back(t.path().filename().string(), f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST(ServeE2E, EveryEndpointAnswersAndVerdictsEqualLeapChecks) {
  server s;
  // A fixed input seed on both sides: error measures are then comparable.
  ASSERT_TRUE(s.start("endpoints", {"executor.timeout_seconds=5", "executor.seed=7"}))
    << s.proc->err();
  auto health = http_call(s.port, "GET", "/health");
  ASSERT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(json::parse(health.body)["status"], "ok");
  EXPECT_EQ(health.header("Leap-Schema"), "v1");
  auto tasks = json::parse(http_call(s.port, "GET", "/v1/tasks").body);
  EXPECT_GE(tasks["tasks"].size(), 20u);
  auto task = http_call(s.port, "GET", "/v1/tasks/vector_add");
  ASSERT_EQ(task.status, 200);
  EXPECT_NE(json::parse(task.body)["prompt"].get<std::string>().find("solution"), std::string::npos);
  EXPECT_EQ(http_call(s.port, "GET", "/v1/tasks/nope").status, 404);
  EXPECT_EQ(http_call(s.port, "GET", "/v2/everything").status, 404);
  auto wrong = http_call(s.port, "DELETE", "/v1/check");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.header("Allow"), "POST");

  // Every bundled candidate over HTTP (all at once) and through the in-process evaluator.
  auto cands = bundled_candidates();
  ASSERT_GE(cands.size(), 10u);
  std::vector<http_reply> replies(cands.size());
  std::vector<std::thread> ts;
  for (std::size_t i = 0; i < cands.size(); ++i)
    ts.emplace_back([&, i] {
      replies[i] = http_call(s.port, "POST", "/v1/check",
                             check_body(cands[i].first, *read_file(cands[i].second)));
    });
  for (auto& t : ts)
    t.join();
  auto cfg = config::defaults();
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  ASSERT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  cfg.executor.timeout_seconds = 5;
  cfg.executor.seed = 7;
  auto svc = runtime::make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto ev = runtime::evaluator::create(**svc);
  ASSERT_TRUE(ev.ok()) << ev.message();
  std::vector<runtime::check_item> items;
  for (auto& [t, f] : cands)
    items.push_back({t, *read_file(f), false, false});
  auto local = (*ev)->evaluate(items);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    ASSERT_EQ(replies[i].status, 200) << cands[i].second << ": " << replies[i].body;
    ASSERT_TRUE(local[i].ok()) << local[i].message();
    auto j = json::parse(replies[i].body);
    const auto& v = local[i]->v;
    EXPECT_EQ(j["status"], env::to_string(v.st)) << cands[i].second;
    EXPECT_EQ(j["reason"], v.reason) << cands[i].second;
    // atomicAdd makes a float sum's order (so its last bits) differ from run to run.
    const bool order_dependent = cands[i].second.find("atomic") != std::string::npos;
    if (j["max_abs_error"].is_null()) // NaN or infinite
      EXPECT_FALSE(std::isfinite(v.max_abs_error)) << cands[i].second;
    else if (order_dependent)
      EXPECT_NEAR(j["max_abs_error"].get<double>(), v.max_abs_error, 1e-3) << cands[i].second;
    else
      EXPECT_DOUBLE_EQ(j["max_abs_error"].get<double>(), v.max_abs_error) << cands[i].second;
    EXPECT_EQ(j["mismatches"], v.mismatches) << cands[i].second;
  }
  auto metrics = http_call(s.port, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* family :
       {"leap_http_requests_total{route=\"check\",code=\"200\"}", "leap_verdicts_total{status=\"correct\"}",
        "# TYPE leap_compile_seconds histogram", "leap_run_seconds_count", "leap_pool_queue_depth{pool=\"compile\"}",
        "leap_pool_busy_workers{pool=\"execute\"}", "leap_pool_cache_hits_total{pool=\"compile\"}",
        "leap_jobs_waiting"})
    EXPECT_NE(metrics.body.find(family), std::string::npos) << family;
}

TEST(ServeE2E, GroupsAndTurnsOverHttp) {
  server s;
  ASSERT_TRUE(s.start("groups", {})) << s.proc->err();
  auto cand = [](const std::string& n) {
    return *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/" + n);
  };
  auto open = http_call(s.port, "POST", "/v1/groups",
                        json{{"task", "vector_add"},
                             {"sources", {cand("compile_error.cu"), cand("grid_stride.cu")}},
                             {"tokens", {100, 120}}}
                          .dump());
  ASSERT_EQ(open.status, 200) << open.body;
  auto g = json::parse(open.body);
  EXPECT_EQ(g["dcp"], "expand");
  EXPECT_EQ(g["attempts"][0]["state"], "awaiting_turn");
  EXPECT_EQ(g["attempts"][0]["turns"][0]["verdict"]["status"], "compile_error");
  EXPECT_NE(g["attempts"][0]["next_prompt"].get<std::string>().find("compile"), std::string::npos);
  const std::string id = g["group"];
  auto turn_body = json{{"attempt", 0}, {"turn", 2}, {"source", cand("grid_stride.cu")}}.dump();
  auto t1 = http_call(s.port, "POST", "/v1/groups/" + id + "/turns", turn_body);
  auto t2 = http_call(s.port, "POST", "/v1/groups/" + id + "/turns", turn_body); // a retry
  ASSERT_EQ(t1.status, 200) << t1.body;
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(json::parse(t1.body)["attempts"], json::parse(t2.body)["attempts"]);
  auto done = json::parse(http_call(s.port, "GET", "/v1/groups/" + id).body);
  EXPECT_TRUE(done["finished"]);
  EXPECT_EQ(done["rewards"].size(), 2u);
  EXPECT_GT(done["rewards"][1].get<double>(), done["rewards"][0].get<double>());
  EXPECT_EQ(http_call(s.port, "POST", "/v1/groups/" + id + "/turns",
                      json{{"attempt", 0}, {"turn", 3}, {"source", "x"}}.dump())
              .status,
            409);
  auto bad = http_call(s.port, "POST", "/v1/groups/" + id + "/turns",
                       json{{"attempt", "zero"}, {"turn", 3}, {"source", "x"}}.dump());
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("field attempt"), std::string::npos) << bad.body;
  EXPECT_EQ(http_call(s.port, "GET", "/v1/groups/00000000000000000000000000000000").status, 404);
}

TEST(ServeE2E, HostileClientsGetA4xxOrAVerdictAndTheServerStaysUp) {
  server s;
  // One trial and no repeat run per check: this test judges the HTTP answers and the server's
  // survival and memory, not verdicts (EveryEndpointAnswersAndVerdictsEqualLeapChecks does), and
  // each of its 129 checks of a good candidate otherwise runs it four times.
  ASSERT_TRUE(s.start("hostile", {"serve.threads=2", "executor.trials=1", "executor.check_repeat=false"}))
    << s.proc->err();
  const std::string good = check_body(
    "vector_add", *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/grid_stride.cu"));
  ASSERT_EQ(http_call(s.port, "POST", "/v1/check", good).status, 200); // warm: later checks hit the cache
  auto raw = [&](const std::string& bytes) {
    http_connection c(s.port);
    c.send(bytes);
    return c.read_reply(std::chrono::seconds(10));
  };
  EXPECT_EQ(raw("GARBAGE\r\n\r\n").status, 400);
  EXPECT_EQ(raw("GET / HTTP/9.9\r\n\r\n").status, 400);
  EXPECT_EQ(raw(http_request_text("POST", "/v1/check", "{\"task\":")).status, 400);
  EXPECT_EQ(raw(http_request_text("POST", "/v1/check", std::string(70 * 1024, 'x'))).status, 413);
  EXPECT_EQ(raw("GET /health HTTP/1.1\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n").status,
            431);
  EXPECT_EQ(raw(http_request_text("POST", "/v1/check", "[]")).status, 400);
  EXPECT_EQ(raw(http_request_text("POST", "/v1/check", "{\"task\":\"vector_add\",\"source\":\"\xc3\x28\"}"))
              .status,
            400);
  {
    // Truncated: a body shorter than its Content-Length, then the client goes away.
    http_connection c(s.port);
    c.send("POST /v1/check HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"task\"");
  }
  {
    // Slow: a byte every 300 ms; the whole request must arrive within 2 s, so the server cuts
    // the connection before the request is complete.
    http_connection c(s.port);
    auto req = http_request_text("POST", "/v1/check", good);
    bool cut = false;
    for (std::size_t i = 0; i < 20 && !cut; ++i) {
      c.send(req.substr(i, 1));
      cut = c.closed_by_server(std::chrono::milliseconds(300));
    }
    EXPECT_TRUE(cut) << "a slow client kept its connection past the read timeout";
  }
  // 64 concurrent clients, twice: answers are verdicts or 4xx; RSS after each round.
  auto round = [&] {
    std::atomic<int> bad{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 64; ++i)
      ts.emplace_back([&, i] {
        std::vector<http_reply> rs;
        rs.push_back(http_call(s.port, "POST", "/v1/check", good));
        rs.push_back(http_call(s.port, "POST", "/v1/check", "{\"task\":\"vector_add\",\"source\":" + std::to_string(i)));
        rs.push_back(http_call(s.port, "GET", "/v1/groups/" + std::to_string(i)));
        rs.push_back(http_call(s.port, "GET", "/health"));
        for (auto& r : rs)
          if (r.status != 200 && (r.status < 400 || r.status >= 500))
            ++bad;
      });
    for (auto& t : ts)
      t.join();
    return bad.load();
  };
  const auto pid = s.proc->pid();
  long before = status_kb(pid, "VmHWM");
  EXPECT_EQ(round(), 0);
  long first = status_kb(pid, "VmHWM"), first_now = status_kb(pid, "VmRSS");
  EXPECT_EQ(round(), 0);
  long second = status_kb(pid, "VmHWM"), second_now = status_kb(pid, "VmRSS");
  std::printf("serve peak RSS: %ld KiB before load, %ld after round 1, %ld after round 2 (+%ld KiB); "
              "RSS now %ld -> %ld KiB\n",
              before, first, second, second - first, first_now, second_now);
  RecordProperty("peak_rss_round1_kb", std::to_string(first));
  RecordProperty("peak_rss_round2_kb", std::to_string(second));
  EXPECT_LT(second - first, 20 * 1024);
  auto health = http_call(s.port, "GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_FALSE(s.proc->exited(std::chrono::milliseconds(0)));
}

TEST(ServeE2E, WithClusterNodesTheChecksRunOnTheNodes) {
  auto d = temp_dir("node");
  leap_process node({LEAP_BINARY, "--set", "environment.cache_dir=" LEAP_TEST_CACHE_DIR, "--set",
                     "environment.backend=cpu", "--set", "environment.work_dir=" + d + "/work",
                     "node", "--listen", "127.0.0.1:0"},
                    d + "/node");
  auto addr = node.wait_for("node ready on ([0-9.]+:[0-9]+)", std::chrono::seconds(60));
  ASSERT_TRUE(addr) << node.err();
  server s;
  ASSERT_TRUE(s.start("cluster", {"cluster.nodes=[\"" + *addr + "\"]"})) << s.proc->err();
  EXPECT_NE(s.proc->out().find("per node (cluster)"), std::string::npos) << s.proc->out();
  auto src = *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/grid_stride.cu");
  auto r = http_call(s.port, "POST", "/v1/check", check_body("vector_add", "// node\n" + src));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["status"], "correct");
  EXPECT_TRUE(node.wait_for("head connected", std::chrono::seconds(10), true)) << node.err();
  node.kill(SIGKILL);
  fs::remove_all(d);
}

TEST(ServeE2E, ABearerTokenIsRequiredWhenSetAndOffLoopback) {
  server s;
  ASSERT_TRUE(s.start("token", {}, {"LEAP_SERVE_TOKEN=s3cret"})) << s.proc->err();
  EXPECT_EQ(http_call(s.port, "GET", "/health").status, 200); // liveness needs no token
  auto none = http_call(s.port, "GET", "/v1/tasks");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.header("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(http_call(s.port, "GET", "/v1/tasks", {}, "Authorization: Bearer nope\r\n").status, 401);
  EXPECT_EQ(http_call(s.port, "GET", "/v1/tasks", {}, "Authorization: Bearer s3cret\r\n").status, 200);
  EXPECT_EQ(http_call(s.port, "GET", "/metrics", {}, "Authorization: Bearer s3cre\r\n").status, 401);
  // Off loopback without a token it does not start (checked before anything binds).
  auto d = temp_dir("no-token");
  leap_process p({LEAP_BINARY, "--set", "environment.cache_dir=" LEAP_TEST_CACHE_DIR, "serve",
                  "--listen", "0.0.0.0:0"},
                 d + "/serve", {"LEAP_SERVE_TOKEN="});
  ASSERT_TRUE(p.exited(std::chrono::seconds(60)));
  EXPECT_EQ(WEXITSTATUS(p.status()), 2);
  EXPECT_NE(p.err().find("LEAP_SERVE_TOKEN"), std::string::npos) << p.err();
  fs::remove_all(d);
}

TEST(ServeE2E, SigtermLetsTheRunningCallFinishThenExits) {
  server s;
  ASSERT_TRUE(s.start("drain", {"executor.timeout_seconds=3"})) << s.proc->err();
  const std::string slow = check_body(
    "vector_add", "// " + std::to_string(::getpid()) + "\n"
                    + *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/infinite_loop.cu"));
  http_reply answer;
  std::thread t([&] { answer = http_call(s.port, "POST", "/v1/check", slow); });
  // Wait until the call is in the service (a job in flight), then ask the server to stop.
  for (int i = 0; i < 200; ++i) {
    auto m = http_call(s.port, "GET", "/metrics").body;
    if (m.find("leap_jobs_in_flight{stage=\"compile\"} 0") == std::string::npos
        || m.find("leap_jobs_in_flight{stage=\"execute\"} 1") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  s.proc->kill(SIGTERM);
  t.join();
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(json::parse(answer.body)["status"], "timeout");
  ASSERT_TRUE(s.proc->exited(std::chrono::seconds(60)));
  EXPECT_TRUE(s.proc->exited_ok()) << s.proc->err();
  EXPECT_NE(s.proc->err().find("stopped after"), std::string::npos) << s.proc->err();
}

TEST(ServeE2E, ThePythonClientOverHttpsRetriesBusyAnswers) {
  auto d = temp_dir("tls");
  auto cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
             "subjectAltName=IP:127.0.0.1 -keyout " + d + "/key.pem -out " + d + "/cert.pem 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a test certificate";
  server s;
  ASSERT_TRUE(s.start("python",
                      {"serve.tls_cert=" + d + "/cert.pem", "serve.tls_key=" + d + "/key.pem",
                       "serve.max_queue=1", "compiler.workers=1"},
                      {"LEAP_SERVE_TOKEN=py-token"}))
    << s.proc->err();
  EXPECT_NE(s.proc->out().find("https://"), std::string::npos);
  auto log = d + "/python.log";
  auto run = std::string("env LEAP_SERVE_URL=https://127.0.0.1:") + std::to_string(s.port)
             + " LEAP_SERVE_CAFILE=" + d + "/cert.pem LEAP_SERVE_TOKEN=py-token LEAP_SOURCE_DIR="
             + LEAP_SOURCE_DIR + " timeout 300 " + LEAP_PYTHON + " " + LEAP_SOURCE_DIR
             + "/tests/clients/python/leap_env_test.py > " + log + " 2>&1";
  int rc = std::system(run.c_str());
  auto out = read_file(log);
  EXPECT_EQ(rc, 0) << (out ? *out : std::string("(no output)"));
  fs::remove_all(d);
}
