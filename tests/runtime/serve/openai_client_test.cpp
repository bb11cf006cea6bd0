// The OpenAI-compatible completions client (runtime/serve/openai_client.hpp) against a small
// scripted HTTP server in this test (a fixture on loopback, not a model): 429 and 500 are
// retried after a back-off and then succeed; a server that never answers times out and is
// retried; errors that outlast the retries, 400s (not retried), refused connections and an
// https:// URL on a server not speaking TLS (not retried) come back as errors naming the failure
// and the tries, never a crash or a hang; a bad openai.tls_ca fails create(); at most
// max_concurrency calls are on the wire; the answer's token ids, log-probs and usage are parsed.
#include "runtime/serve/openai_client.hpp"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

using namespace leap;
using namespace leap::serve;
using namespace std::chrono_literals;

namespace {

const char* ok_body =
  R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[)"
  R"({"index":0,"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[-0.5,-0.25]},)"
  R"("finish_reason":"length","token_ids":[97,98]}],)"
  R"("usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})";

// A loopback HTTP server answering request k with script(k): a status (0: never answer).
class fixture_server {
public:
  // greeting: when not empty, sent to every connection at once, which is then closed (a server
  // that does not speak what the client does).
  explicit fixture_server(std::function<int(int)> script, std::chrono::milliseconds hold = 0ms,
                          std::string greeting = "")
      : script_(std::move(script)), hold_(hold), greeting_(std::move(greeting)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~fixture_server() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (auto& t : conns_)
      t.join();
  }
  int port() const { return port_; }
  int requests() const { return count_.load(); }
  int max_open() const { return max_open_.load(); }

private:
  void accept_loop() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0 || stopping_) {
        if (c >= 0)
          ::close(c);
        return;
      }
      conns_.emplace_back([this, c] { serve(c); });
    }
  }
  void serve(int c) {
    const int open = ++open_;
    int seen = max_open_.load();
    while (open > seen && !max_open_.compare_exchange_weak(seen, open)) {
    }
    if (!greeting_.empty()) {
      ++count_;
      --open_;
      ::send(c, greeting_.data(), greeting_.size(), MSG_NOSIGNAL);
      ::close(c);
      return;
    }
    std::string in;
    char buf[4096];
    for (;;) { // the request: headers, then Content-Length bytes
      auto head = in.find("\r\n\r\n");
      if (head != std::string::npos) {
        auto cl = in.find("Content-Length: ");
        if (cl == std::string::npos)
          cl = in.find("content-length: ");
        std::size_t want = cl == std::string::npos ? 0 : std::stoul(in.substr(cl + 16));
        if (in.size() >= head + 4 + want)
          break;
      }
      auto n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0)
        break;
      in.append(buf, static_cast<std::size_t>(n));
    }
    const int k = count_++;
    const int status = script_(k);
    if (hold_ > 0ms)
      std::this_thread::sleep_for(hold_);
    if (status == 0) { // never answer: wait until the client gives up
      while (::recv(c, buf, sizeof buf, 0) > 0) {
      }
      --open_;
    } else {
      // A call is off the wire once it is answered: count it closed before the answer goes out,
      // or the client's next call may connect before this thread gets here (a false 3 of 2).
      --open_;
      std::string body = status == 200 ? ok_body
                                       : R"({"error":{"message":"scripted )" + std::to_string(status)
                                           + R"(","type":"x","param":null,"code":null}})";
      std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n"
                        + (status == 429 ? "Retry-After: 0\r\n" : "")
                        + "Content-Length: " + std::to_string(body.size())
                        + "\r\nConnection: close\r\n\r\n" + body;
      ::send(c, out.data(), out.size(), MSG_NOSIGNAL);
    }
    ::close(c);
  }

  std::function<int(int)> script_;
  std::chrono::milliseconds hold_;
  std::string greeting_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> count_{0}, open_{0}, max_open_{0};
  std::thread thread_;
  std::vector<std::thread> conns_; // accept thread only, joined after it
};

openai_client_options options(int port) {
  openai_client_options o;
  o.url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.model = "m";
  o.retries = 2;
  o.backoff = 20ms;
  o.timeout = 2s;
  return o;
}

// One call, waited for (the test's thread may block; the client never does).
result<openai_answer> call_once(openai_client& c) {
  std::promise<result<openai_answer>> p;
  auto f = p.get_future();
  openai_completion_call call;
  call.prompt = {1, 2, 3};
  call.seed = 7;
  c.complete(call, [&p](result<openai_answer> r) { p.set_value(std::move(r)); });
  if (f.wait_for(60s) != std::future_status::ready)
    return make_error("the call hung");
  return f.get();
}

} // namespace

TEST(OpenAIClient, RetriesA429AndA500ThenParsesTheAnswer) {
  fixture_server s([](int k) { return k == 0 ? 429 : k == 1 ? 500 : 200; });
  auto c = openai_client::create(options(s.port()));
  ASSERT_TRUE(c.ok()) << c.message();
  auto r = call_once(**c);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->tries, 3);
  EXPECT_EQ((*c)->retried(), 2u);
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->samples[0].tokens, (std::vector<int>{97, 98}));
  EXPECT_EQ(r->samples[0].logprobs, (std::vector<float>{-0.5f, -0.25f}));
  EXPECT_EQ(r->samples[0].text, "ab");
  EXPECT_EQ(r->samples[0].finish_reason, "length");
  EXPECT_EQ(r->prompt_tokens, 3);
  EXPECT_EQ(r->completion_tokens, 2);
  EXPECT_EQ(s.requests(), 3);
}

TEST(OpenAIClient, FailuresThatOutlastTheRetriesAreReportedNotThrown) {
  {
    fixture_server s([](int) { return 503; });
    auto c = openai_client::create(options(s.port()));
    auto r = call_once(**c);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("after 3 tries"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("HTTP 503: scripted 503"), std::string::npos) << r.message();
  }
  {
    fixture_server s([](int) { return 400; }); // the caller's fault: not retried
    auto c = openai_client::create(options(s.port()));
    auto r = call_once(**c);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("after 1 try: HTTP 400"), std::string::npos) << r.message();
    EXPECT_EQ(s.requests(), 1);
  }
  {
    int port = 0;
    { fixture_server gone([](int) { return 200; }); port = gone.port(); } // closed again
    auto c = openai_client::create(options(port));
    auto r = call_once(**c);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("cannot connect"), std::string::npos) << r.message();
  }
  for (const char* url : {"ftp://x", "localhost:1", "http://:80", "https://:443"}) {
    auto o = options(1);
    o.url = url;
    EXPECT_FALSE(openai_client::create(o).ok()) << url;
  }
}

// https:// (the certificate checks run against `leap serve` with TLS in openai_e2e_test.cpp):
// a CA file that is missing or not PEM is an error of create() naming the key and the file; a
// server that does not speak TLS fails the handshake once, not retried, naming the URL.
TEST(OpenAIClient, HttpsNeedsAReadableCaFileAndAServerSpeakingTls) {
  auto o = options(1);
  o.url = "https://127.0.0.1:1/v1";
  o.tls_ca = "/nonexistent/leap-test-ca.pem";
  auto missing = openai_client::create(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("openai.tls_ca"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("/nonexistent/leap-test-ca.pem"), std::string::npos)
    << missing.message();
  const std::string not_pem = ::testing::TempDir() + "leap-not-a-ca-" + std::to_string(::getpid());
  { std::ofstream(not_pem) << "not a certificate\n"; }
  o.tls_ca = not_pem;
  auto garbage = openai_client::create(o);
  std::remove(not_pem.c_str());
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.message().find("openai.tls_ca: cannot load \"" + not_pem), std::string::npos)
    << garbage.message();

  fixture_server plain([](int) { return 200; }, 0ms,
                       "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  o = options(plain.port());
  o.url = "https://127.0.0.1:" + std::to_string(plain.port()) + "/v1";
  auto c = openai_client::create(o); // the system's trust store
  ASSERT_TRUE(c.ok()) << c.message();
  auto r = call_once(**c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("after 1 try: TLS handshake with " + o.url + " failed"),
            std::string::npos)
    << r.message();
  EXPECT_EQ((*c)->retried(), 0u);
  EXPECT_EQ(plain.requests(), 1);
}

TEST(OpenAIClient, ASilentServerTimesOutAndIsRetried) {
  fixture_server s([](int k) { return k < 2 ? 0 : 200; });
  auto o = options(s.port());
  o.timeout = 300ms;
  auto c = openai_client::create(o);
  auto t0 = std::chrono::steady_clock::now();
  auto r = call_once(**c);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->tries, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);

  fixture_server never([](int) { return 0; });
  o = options(never.port());
  o.timeout = 200ms;
  o.retries = 1;
  auto c3 = openai_client::create(o);
  auto r3 = call_once(**c3);
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.message().find("no answer within 200 ms"), std::string::npos) << r3.message();
  EXPECT_NE(r3.message().find("after 2 tries"), std::string::npos) << r3.message();
}

TEST(OpenAIClient, AtMostMaxConcurrencyCallsAreOnTheWire) {
  fixture_server s([](int) { return 200; }, 100ms);
  auto o = options(s.port());
  o.max_concurrency = 2;
  auto c = openai_client::create(o);
  std::mutex m;
  std::condition_variable cv;
  int done = 0, ok = 0;
  for (int i = 0; i < 6; ++i)
    (*c)->complete({}, [&](result<openai_answer> r) {
      std::lock_guard<std::mutex> lk(m);
      ++done;
      ok += r.ok();
      cv.notify_all();
    });
  std::unique_lock<std::mutex> lk(m);
  ASSERT_TRUE(cv.wait_for(lk, 30s, [&] { return done == 6; }));
  EXPECT_EQ(ok, 6);
  EXPECT_LE(s.max_open(), 2);
  EXPECT_EQ(s.requests(), 6);
}
