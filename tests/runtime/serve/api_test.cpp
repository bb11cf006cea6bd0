// `leap serve`'s API without sockets (runtime/serve/api.hpp): routes and methods, request bodies
// parsed into the service's calls with errors that name the field, answers rendered as JSON.
#include "runtime/serve/api.hpp"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <random>

using namespace leap;
using namespace leap::serve;
using nlohmann::json;

TEST(ServeApi, RoutesNameTheirResourceAndWrongMethodsSayWhichIsAllowed) {
  EXPECT_EQ(match("GET", "/health").kind, route_kind::health);
  EXPECT_EQ(match("GET", "/metrics").kind, route_kind::metrics);
  EXPECT_EQ(match("GET", "/v1/tasks").kind, route_kind::tasks);
  auto t = match("GET", "/v1/tasks/vector_add?x=1");
  EXPECT_EQ(t.kind, route_kind::task);
  EXPECT_EQ(t.name, "vector_add");
  EXPECT_EQ(match("POST", "/v1/check").kind, route_kind::check);
  EXPECT_EQ(match("POST", "/v1/groups").kind, route_kind::open_group);
  auto v = match("GET", "/v1/groups/abc");
  EXPECT_EQ(v.kind, route_kind::view_group);
  EXPECT_EQ(v.name, "abc");
  auto turn = match("POST", "/v1/groups/abc/turns");
  EXPECT_EQ(turn.kind, route_kind::turn);
  EXPECT_EQ(turn.name, "abc");
  auto wrong = match("GET", "/v1/check");
  EXPECT_EQ(wrong.kind, route_kind::wrong_method);
  EXPECT_EQ(wrong.allow, "POST");
  EXPECT_EQ(match("GET", "/v2/tasks").kind, route_kind::unknown);
  EXPECT_EQ(match("GET", "/").kind, route_kind::unknown);
  EXPECT_EQ(match("POST", "/v1/groups/a/b/turns").kind, route_kind::unknown);
}

TEST(ServeApi, CheckBodiesAreParsedAndEveryErrorNamesTheField) {
  auto ok = parse_check(R"({"task":"vector_add","source":"int x;","schema":"v1"})");
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok->task, "vector_add");
  EXPECT_TRUE(ok->s.has_code);
  EXPECT_EQ(ok->s.code, "int x;");
  auto comp = parse_check(R"({"task":"vector_add","completion":"I cannot write that."})");
  ASSERT_TRUE(comp.ok()) << comp.message();
  EXPECT_FALSE(comp->s.has_code);
  auto err = [](const std::string& body) {
    auto r = parse_check(body);
    EXPECT_FALSE(r.ok()) << body;
    return r.ok() ? std::string() : r.message();
  };
  EXPECT_EQ(err(R"({"task":"a"})"), "missing field 'source' (or 'completion')");
  EXPECT_EQ(err(R"({"task":1,"source":""})"), "field task: expected a string, got number");
  EXPECT_EQ(err(R"({"task":"a","source":"b","sorce":"c"})"), "unknown field 'sorce'");
  EXPECT_EQ(err(R"([1,2])"), "the body must be a JSON object");
  EXPECT_EQ(err(R"({"task":"a","source":"b","schema":"v2"})"),
            "field schema: this server speaks \"v1\", not \"v2\"");
  for (auto [body, start] :
       {std::pair<std::string, std::string>{R"({"task":"a",)", "malformed JSON at byte 13: "},
        {"", "malformed JSON at byte 1: "},
        {"{\"task\":\"\xff\",\"source\":\"\"}", "malformed JSON at byte "}}) {
    auto m = err(body);
    EXPECT_EQ(m.rfind(start, 0), 0u) << m;
  }
}

TEST(ServeApi, GroupBodiesTakeSourcesOrCompletionsWithTokens) {
  auto g = parse_group(R"({"task":"t","sources":["a","b"],"tokens":[3,4]})", 8);
  ASSERT_TRUE(g.ok()) << g.message();
  ASSERT_EQ(g->attempts.size(), 2u);
  EXPECT_TRUE(g->attempts[0].has_code);
  EXPECT_EQ(g->attempts[0].code, "a");
  EXPECT_EQ(g->attempts[1].tokens, 4);
  // Completions go through the trainer's code extraction; one without code is a failed turn.
  auto c = parse_group(
    R"({"task":"t","completions":["Here:\n```cuda\nextern \"C\" void solution() {}\n```","no code at all"]})",
    8);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->attempts[0].has_code);
  EXPECT_EQ(c->attempts[0].code, "extern \"C\" void solution() {}\n");
  EXPECT_FALSE(c->attempts[1].has_code);
  EXPECT_FALSE(c->attempts[1].no_code_reason.empty());
  auto err = [](const std::string& body) {
    auto r = parse_group(body, 4);
    EXPECT_FALSE(r.ok()) << body;
    return r.ok() ? std::string() : r.message();
  };
  EXPECT_EQ(err(R"({"task":"t"})"), "missing field 'sources' (or 'completions')");
  EXPECT_EQ(err(R"({"task":"t","sources":["a"],"completions":["b"]})"),
            "fields sources and completions: send one of them, not both");
  EXPECT_EQ(err(R"({"task":"t","sources":[]})"),
            "field sources: a group has 1 to 4 attempts (serve.max_group_size), got 0");
  EXPECT_EQ(err(R"({"task":"t","sources":["a","b","c","d","e"]})"),
            "field sources: a group has 1 to 4 attempts (serve.max_group_size), got 5");
  EXPECT_EQ(err(R"({"task":"t","sources":"a"})"),
            "field sources: expected an array of strings, got string");
  EXPECT_EQ(err(R"({"task":"t","sources":["a",2]})"), "field sources[1]: expected a string, got number");
  EXPECT_EQ(err(R"({"task":"t","sources":["a"],"tokens":[1,2]})"),
            "field tokens: expected an array of 1 integers (one per attempt)");
  EXPECT_EQ(err(R"({"task":"t","sources":["a"],"tokens":[-1]})"),
            "field tokens[0]: -1 is not in [0, 1099511627776]");
  EXPECT_EQ(err(R"({"task":"t","sources":["a"],"tokens":[1.5]})"),
            "field tokens[0]: expected an integer, got number");
}

TEST(ServeApi, TurnBodiesNeedAnAttemptATurnAndOneText) {
  auto t = parse_turn(R"({"attempt":2,"turn":3,"source":"x","tokens":9})", "g1");
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->group, "g1");
  EXPECT_EQ(t->attempt, 2);
  EXPECT_EQ(t->turn, 3);
  EXPECT_EQ(t->s.code, "x");
  EXPECT_EQ(t->s.tokens, 9);
  auto err = [](const std::string& body) {
    auto r = parse_turn(body, "g");
    EXPECT_FALSE(r.ok()) << body;
    return r.ok() ? std::string() : r.message();
  };
  EXPECT_EQ(err(R"({"turn":2,"source":"x"})"), "missing field 'attempt'");
  EXPECT_EQ(err(R"({"attempt":-1,"turn":2,"source":"x"})"), "field attempt: -1 is not in [0, 1048576]");
  EXPECT_EQ(err(R"({"attempt":0,"turn":0,"source":"x"})"), "field turn: 0 is not in [1, 1048576]");
  EXPECT_EQ(err(R"({"attempt":0,"turn":18446744073709551615,"source":"x"})"),
            "field turn: 18446744073709551615 is not in [1, 1048576]");
  EXPECT_EQ(err(R"({"attempt":0,"turn":2})"), "missing field 'source' (or 'completion')");
  EXPECT_EQ(err(R"({"attempt":0,"turn":2,"source":null})"), "field source: expected a string, got null");
}

TEST(ServeApi, StatusesMapToHttpCodes) {
  EXPECT_EQ(http_status(msg::serve_status::ok), 200);
  EXPECT_EQ(http_status(msg::serve_status::bad_request), 400);
  EXPECT_EQ(http_status(msg::serve_status::not_found), 404);
  EXPECT_EQ(http_status(msg::serve_status::conflict), 409);
  EXPECT_EQ(http_status(msg::serve_status::busy), 429);
  EXPECT_EQ(http_status(msg::serve_status::failed), 502);
  auto e = json::parse(error_body(404, "no group 'x'"));
  EXPECT_EQ(e["schema"], "v1");
  EXPECT_EQ(e["error"]["status"], 404);
  EXPECT_EQ(e["error"]["message"], "no group 'x'");
}

TEST(ServeApi, AGroupViewShowsNextTurnsWhileRunningAndRewardsOnceFinished) {
  msg::group_view g;
  g.id = "abc";
  g.task = "vector_add";
  g.dcp = algo::group_decision::expand;
  g.activated = true;
  g.turn1_failed = 1;
  g.turn1_passed = 1;
  g.estimator = "rank";
  msg::attempt_view solved;
  solved.attempt = 0;
  solved.state = msg::attempt_state::ended;
  solved.end = algo::attempt_end::solved;
  solved.solved_turn = 1;
  msg::turn_view tv;
  tv.turn = 1;
  tv.judged = true;
  tv.v.st = env::status::correct;
  tv.v.task = "vector_add";
  solved.turns.push_back(tv);
  msg::attempt_view waiting;
  waiting.attempt = 1;
  waiting.state = msg::attempt_state::awaiting_turn;
  waiting.turns.push_back(msg::turn_view{1, false, {}});
  waiting.next_turn = 2;
  waiting.next_prompt = "fix it";
  g.attempts = {solved, waiting};
  auto j = json::parse(group_body(g));
  EXPECT_EQ(j["group"], "abc");
  EXPECT_EQ(j["dcp"], "expand");
  EXPECT_EQ(j["turn1"]["failed"], 1);
  EXPECT_EQ(j["attempts"][0]["turns"][0]["verdict"]["status"], "correct");
  EXPECT_TRUE(j["attempts"][1]["turns"][0]["verdict"].is_null());
  EXPECT_EQ(j["attempts"][1]["next_turn"], 2);
  EXPECT_EQ(j["attempts"][1]["next_prompt"], "fix it");
  EXPECT_FALSE(j.contains("rewards"));
  g.finished = true;
  g.attempts[0].reward = 1;
  g.attempts[0].advantages = {1};
  g.attempts[1].state = msg::attempt_state::ended;
  g.attempts[1].next_turn = 0;
  g.attempts[1].reward = -1;
  j = json::parse(group_body(g));
  EXPECT_EQ(j["rewards"], json::parse("[1.0, -1.0]"));
  EXPECT_EQ(j["attempts"][0]["advantages"], json::parse("[1.0]"));
  EXPECT_FALSE(j["attempts"][1].contains("next_turn"));
  // The check answer is exactly `leap check --json`'s object.
  EXPECT_EQ(check_body(tv.v), env::to_json(tv.v));
}

TEST(ServeApi, MutatedBodiesNeverThrowAndEveryRefusalSaysWhy) {
  // Byte flips, cuts and splices of valid bodies (fixed seed): each parse is a call or an error
  // with a message, never an exception.
  const std::vector<std::string> seeds{
    R"({"task":"vector_add","source":"__global__ void k() {}"})",
    R"({"task":"t","sources":["a","b"],"tokens":[1,2],"schema":"v1"})",
    R"({"attempt":1,"turn":2,"completion":"```cuda\nx\n```","tokens":3})"};
  std::mt19937 rng(20261201);
  int refused = 0, accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    auto body = seeds[static_cast<std::size_t>(i) % seeds.size()];
    for (int m = 0; m < 1 + static_cast<int>(rng() % 4); ++m) {
      auto at = rng() % (body.size() + 1);
      switch (rng() % 4) {
        case 0: if (at < body.size()) body[at] = static_cast<char>(rng()); break;
        case 1: body = body.substr(0, at); break;
        case 2: body.insert(at, 1, "{}[]\",:0e-\x00\xff"[rng() % 13]); break;
        case 3: body.insert(at, seeds[rng() % seeds.size()]); break;
      }
    }
    std::vector<std::string> errors;
    EXPECT_NO_THROW({
      auto c = parse_check(body);
      auto g = parse_group(body, 8);
      auto t = parse_turn(body, "g");
      for (auto* m : {c.ok() ? nullptr : &c.message(), g.ok() ? nullptr : &g.message(),
                      t.ok() ? nullptr : &t.message()})
        if (m)
          errors.push_back(*m);
      accepted += c.ok() + g.ok() + t.ok();
    }) << body;
    for (auto& e : errors)
      EXPECT_FALSE(e.empty()) << body;
    refused += static_cast<int>(errors.size());
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

// The task listing says which split each task is in (eval = held out) and its category.
TEST(ServeApi, TaskListingCarriesSplitAndCategory) {
  std::map<std::string, env::task_spec> tasks;
  tasks["relu"].name = "relu";
  tasks["relu"].category = env::task_category::activation;
  tasks["elu"].name = "elu";
  tasks["elu"].split = env::task_split::eval;
  tasks["elu"].category = env::task_category::activation;
  auto j = json::parse(tasks_body(tasks));
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["name"], "elu");
  EXPECT_EQ(j["tasks"][0]["split"], "eval");
  EXPECT_EQ(j["tasks"][1]["split"], "train");
  EXPECT_EQ(j["tasks"][1]["category"], "activation");
  auto one = json::parse(task_body(tasks["elu"], "prompt"));
  EXPECT_EQ(one["split"], "eval");
  EXPECT_EQ(one["category"], "activation");
}
