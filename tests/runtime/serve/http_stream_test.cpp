// The HTTP server's streamed answers (runtime/serve/http_server.hpp, body_stream): bytes written
// to the stream reach the client while the producer is still at work (the test holds the
// producer until the client has read the first part), the body is chunked and complete, the
// connection stays usable for the next request, a producer that drops its stream without end()
// still finishes the answer, a client that goes away turns the stream closed, and a server that
// stops while a producer is at work leaves that producer a closed stream it may still write to.
#include "runtime/serve/http_server.hpp"

#include "tests/runtime/serve/http_client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

using namespace leap;
using namespace std::chrono_literals;

namespace {

struct stream_fixture : ::testing::Test {
  std::unique_ptr<serve::http_server> server;
  std::promise<void> go_on;                // the test lets the producer finish
  std::shared_future<void> go = go_on.get_future().share();
  std::vector<std::thread> producers;
  std::shared_ptr<serve::body_stream> left_open; // the stream the "disconnect" route keeps
  std::atomic<bool> saw_closed{false};

  void SetUp() override {
    serve::http_server_options o;
    o.listen = {"127.0.0.1", 0};
    o.threads = 2;
    auto s = serve::http_server::start(o, [this](serve::http_request req, serve::respond_fn respond) {
      if (req.target == "/plain") {
        serve::http_response r;
        r.body = "{\"ok\":true}";
        return respond(std::move(r));
      }
      auto out = serve::make_body_stream();
      serve::http_response r;
      r.content_type = "text/event-stream";
      r.stream = out;
      out->write("data: first\n\n"); // before the answer: sent with the header
      respond(std::move(r));
      const auto target = req.target;
      if (target == "/held") { // the test keeps the producer's end
        left_open = out;
        return;
      }
      producers.emplace_back([this, out, target]() mutable {
        if (target == "/stream") {
          go.wait();
          out->write("data: second\n\n");
          out->end();
        } else if (target == "/dropped") {
          out->write("data: last\n\n");
          out.reset(); // no end(): the handle's destructor ends the stream
        } else if (target == "/disconnect") {
          auto until = std::chrono::steady_clock::now() + 10s;
          while (!out->closed() && std::chrono::steady_clock::now() < until) {
            out->write(std::string(4096, 'x'));
            std::this_thread::sleep_for(5ms);
          }
          saw_closed = out->closed();
          out->end();
        }
      });
    });
    ASSERT_TRUE(s) << s.message();
    server = std::move(*s);
  }
  void TearDown() override {
    try {
      go_on.set_value();
    } catch (const std::future_error&) {
    }
    for (auto& t : producers)
      t.join();
    if (server)
      server->stop();
  }
};

} // namespace

TEST_F(stream_fixture, BytesReachTheClientBeforeTheProducerIsDoneAndTheConnectionIsKept) {
  test::http_connection c(server->port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send(test::http_request_text("POST", "/stream", "{}")));
  // The producer waits for us: this part can only arrive if it is sent as it is written.
  ASSERT_TRUE(c.wait_for("data: first", 10s));
  go_on.set_value();
  auto r = c.read_reply(10s);
  ASSERT_EQ(r.status, 200) << r.head;
  EXPECT_EQ(r.header("Transfer-Encoding"), "chunked");
  EXPECT_EQ(r.header("Content-Type"), "text/event-stream");
  EXPECT_EQ(r.body, "data: first\n\ndata: second\n\n");
  EXPECT_EQ(r.chunks, 2);
  // Same connection, next request.
  ASSERT_TRUE(c.send(test::http_request_text("GET", "/plain")));
  auto p = c.read_reply(10s);
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.body, "{\"ok\":true}");
  EXPECT_EQ(server->in_flight(), 0u);
}

TEST_F(stream_fixture, AStreamDroppedWithoutEndStillFinishesTheAnswer) {
  auto r = test::http_call(server->port(), "POST", "/dropped", "{}");
  ASSERT_EQ(r.status, 200) << r.head;
  EXPECT_EQ(r.body, "data: first\n\ndata: last\n\n");
}

TEST_F(stream_fixture, AClientThatGoesAwayClosesTheStream) {
  {
    test::http_connection c(server->port());
    ASSERT_TRUE(c.send(test::http_request_text("POST", "/disconnect", "{}")));
    ASSERT_TRUE(c.wait_for("data: first", 10s));
  } // closed here
  for (auto& t : producers)
    t.join();
  producers.clear();
  EXPECT_TRUE(saw_closed.load());
  auto until = std::chrono::steady_clock::now() + 10s;
  while (server->in_flight() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server->in_flight(), 0u);
}

TEST_F(stream_fixture, AServerThatStopsLeavesTheProducerAClosedStream) {
  test::http_connection c(server->port());
  ASSERT_TRUE(c.send(test::http_request_text("POST", "/held", "{}")));
  ASSERT_TRUE(c.wait_for("data: first", 10s));
  ASSERT_TRUE(left_open);
  EXPECT_FALSE(left_open->closed());
  server->stop();
  server.reset(); // the io_context is gone; the producer still holds its stream
  EXPECT_TRUE(left_open->closed());
  left_open->write("data: late\n\n"); // dropped, no crash
  left_open->end();
  left_open.reset();
}
