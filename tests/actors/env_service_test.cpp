// The environment service behind `leap serve` (actors/env_service.hpp) with the real compiler
// and executor pools (nvcc + the CPU emulation):
//  - a served group of known kernels ends exactly as the trainer's group of the same kernels
//    (gatekeeper + judge arithmetic): DCP decision, each attempt's end and verdicts, rewards and
//    advantages;
//  - a turn sent twice runs once and both callers get the same answer; wrong turns, attempts and
//    groups are refused with the field named;
//  - over serve.max_queue waiting jobs a call is refused busy with a retry-after;
//  - an idle group expires.
#include "actors/env_service.hpp"
#include "actors/group_scoring.hpp"
#include "tests/actors/real_pools_fixture.hpp"

#include "policy/text/code_edit.hpp"

#include <thread>

using namespace leap;
using namespace leap::test;

namespace {

// The completion the scripted generator wraps around a kernel (its length is the tokens).
std::int64_t completion_tokens(const std::string& src) {
  return static_cast<std::int64_t>(("```cuda\n" + src + "```").size());
}

msg::submission code(const std::string& src) {
  msg::submission s;
  s.has_code = true;
  s.code = src;
  s.tokens = completion_tokens(src);
  return s;
}

struct service_fixture : gatekeeper_fixture {
  msg::env_service_actor service;

  void serve(actors::env_service_options o) {
    o.backend = env::backend::cpu;
    o.compile_workers = static_cast<int>(svc->cfg.compiler.workers);
    o.exec_workers = 2;
    o.render_prompt = [](const std::string& task, const std::vector<std::string>& codes,
                         const std::vector<std::string>&) {
      return task + " turn " + std::to_string(codes.size() + 1);
    };
    service = actors::spawn_env_service(*sys, o, svc->tasks, compilers, executors);
  }

  template <class Answer, class... Ts>
  Answer ask(Ts&&... xs) {
    caf::scoped_actor self{*sys};
    Answer out;
    self->request(service, std::chrono::minutes(5), std::forward<Ts>(xs)...)
      .receive([&](Answer& a) { out = std::move(a); },
               [](caf::error& e) { ADD_FAILURE() << caf::to_string(e); });
    return out;
  }

  void TearDown() override {
    if (service)
      caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
    gatekeeper_fixture::TearDown();
  }
};

} // namespace

TEST_F(service_fixture, ServedGroupEndsAsTheTrainersGroupOfTheSameKernels) {
  start(2);
  auto sc = std::make_shared<script>();
  sc->turn1 = {candidate("compile_error.cu"), candidate("grid_stride.cu"),
               candidate("wrong_answer.cu"), candidate("do_nothing.cu")};
  sc->later = candidate("float4_gridstride.cu");
  // The trainer's path: gatekeeper (paper DCP, 3 turns) and the judge's arithmetic.
  auto trained = run_group(sc, 4, 3);
  algo::estimator_config est;
  auto scored = actors::score_group(trained, est);

  actors::env_service_options o;
  o.rollout.max_turns = 3;
  o.estimator = est;
  serve(o);
  msg::group_call call{"vector_add", {}};
  for (const auto& src : sc->turn1)
    call.attempts.push_back(code(src));
  auto g = ask<msg::group_answer>(msg::group_atom_v, call);
  ASSERT_EQ(g.status, msg::serve_status::ok) << g.message;
  for (int round = 0; round < 3 && !g.g.finished; ++round) {
    auto attempts = g.g.attempts; // g is replaced by each answer
    for (const auto& a : attempts)
      if (a.state == msg::attempt_state::awaiting_turn) {
        EXPECT_EQ(a.next_prompt, "vector_add turn " + std::to_string(a.next_turn));
        g = ask<msg::group_answer>(msg::turn_atom_v,
                                   msg::turn_call{g.g.id, a.attempt, a.next_turn, code(sc->later)});
        ASSERT_EQ(g.status, msg::serve_status::ok) << g.message;
      }
  }
  ASSERT_TRUE(g.g.finished);
  EXPECT_EQ(g.g.dcp, trained.dcp);
  EXPECT_EQ(g.g.activated, trained.activated);
  ASSERT_EQ(g.g.attempts.size(), trained.trajectories.size());
  for (std::size_t i = 0; i < trained.trajectories.size(); ++i) {
    const auto& t = trained.trajectories[i];
    const auto& a = g.g.attempts[i];
    EXPECT_EQ(a.end, t.end) << i;
    EXPECT_EQ(a.solved_turn, t.solved_turn) << i;
    ASSERT_EQ(a.turns.size(), t.turns.size()) << i;
    for (std::size_t k = 0; k < t.turns.size(); ++k)
      EXPECT_EQ(a.turns[k].v.st, t.turns[k].status) << i << " turn " << k + 1;
    EXPECT_DOUBLE_EQ(a.reward, scored.rewards[i]) << i;
    EXPECT_EQ(a.advantages, scored.advantages[i]) << i;
  }
  // Not a trivial group: DCP expanded it, and solving on turn 1 beat solving on turn 2.
  EXPECT_EQ(g.g.dcp, algo::group_decision::expand);
  EXPECT_NE(scored.rewards[0], scored.rewards[1]);
}

TEST_F(service_fixture, ATurnSentTwiceRunsOnceAndWrongCallsNameWhatIsWrong) {
  start(2);
  actors::env_service_options o;
  o.rollout.max_turns = 3;
  serve(o);
  auto bad = candidate("compile_error.cu");
  auto g = ask<msg::group_answer>(msg::group_atom_v,
                                  msg::group_call{"vector_add", {code(bad), code(bad)}});
  ASSERT_EQ(g.status, msg::serve_status::ok) << g.message;
  ASSERT_EQ(g.g.attempts[0].state, msg::attempt_state::awaiting_turn);
  auto before = compile_stats();
  // Two callers send the same turn at once (a client retrying while the first is in flight).
  msg::turn_call turn{g.g.id, 0, 2, code(uncached(candidate("grid_stride.cu")))};
  caf::scoped_actor self{*sys};
  auto h1 = self->request(service, std::chrono::minutes(5), msg::turn_atom_v, turn);
  auto h2 = self->request(service, std::chrono::minutes(5), msg::turn_atom_v, turn);
  msg::group_answer a1, a2;
  h1.receive([&](msg::group_answer& a) { a1 = a; }, [](caf::error& e) { FAIL() << caf::to_string(e); });
  h2.receive([&](msg::group_answer& a) { a2 = a; }, [](caf::error& e) { FAIL() << caf::to_string(e); });
  ASSERT_EQ(a1.status, msg::serve_status::ok) << a1.message;
  ASSERT_EQ(a2.status, msg::serve_status::ok) << a2.message;
  ASSERT_EQ(a1.g.attempts[0].turns.size(), 2u);
  EXPECT_EQ(a1.g.attempts[0].turns[1].v.st, env::status::correct);
  EXPECT_EQ(a2.g.attempts[0].turns.size(), 2u);
  EXPECT_EQ(a2.g.attempts[0].turns[1].v.st, env::status::correct);
  // The candidate once, not twice; besides it only what was still building at `before` (the
  // reference, started when the group opened, may be).
  EXPECT_EQ(compile_stats().completed - before.completed, 1u + before.busy + before.queued);
  // Later: the same turn again answers the same outcome; other turns are conflicts.
  auto again = ask<msg::group_answer>(msg::turn_atom_v, turn);
  EXPECT_EQ(again.status, msg::serve_status::ok);
  EXPECT_EQ(again.g.attempts[0].turns.size(), 2u);
  turn.turn = 3;
  auto ended = ask<msg::group_answer>(msg::turn_atom_v, turn);
  EXPECT_EQ(ended.status, msg::serve_status::conflict);
  EXPECT_NE(ended.message.find("ended (solved)"), std::string::npos) << ended.message;
  auto skip = ask<msg::group_answer>(msg::turn_atom_v, msg::turn_call{g.g.id, 1, 3, code(bad)});
  EXPECT_EQ(skip.status, msg::serve_status::conflict);
  EXPECT_NE(skip.message.find("expects turn 2"), std::string::npos) << skip.message;
  auto range = ask<msg::group_answer>(msg::turn_atom_v, msg::turn_call{g.g.id, 2, 2, code(bad)});
  EXPECT_EQ(range.status, msg::serve_status::bad_request);
  EXPECT_NE(range.message.find("field attempt"), std::string::npos) << range.message;
  auto nobody = ask<msg::group_answer>(msg::view_atom_v, std::string("0123"));
  EXPECT_EQ(nobody.status, msg::serve_status::not_found);
  auto task = ask<msg::check_answer>(msg::check_atom_v, msg::check_call{"no_such_task", code(bad)});
  EXPECT_EQ(task.status, msg::serve_status::not_found);
  EXPECT_NE(task.message.find("field task"), std::string::npos) << task.message;
}

TEST_F(service_fixture, OverMaxQueueCallsAreRefusedBusyWithARetryAfter) {
  start(1);
  actors::env_service_options o;
  o.max_queue = 1;
  serve(o);
  // Six never-built candidates at once on one compiler: the first call alone puts a job in the
  // queue (its candidate and the reference compile), so calls behind it are refused.
  caf::scoped_actor self{*sys};
  using handle = decltype(self->request(service, std::chrono::minutes(5), msg::check_atom_v,
                                        msg::check_call{}));
  std::vector<handle> hs;
  for (int i = 0; i < 6; ++i)
    hs.push_back(self->request(service, std::chrono::minutes(5), msg::check_atom_v,
                               msg::check_call{"vector_add",
                                               code(uncached(candidate("grid_stride.cu")))}));
  int ok = 0, busy = 0;
  for (auto& h : hs)
    h.receive(
      [&](msg::check_answer& a) {
        if (a.status == msg::serve_status::ok) {
          ++ok;
          EXPECT_EQ(a.v.st, env::status::correct);
        } else {
          ASSERT_EQ(a.status, msg::serve_status::busy) << a.message;
          EXPECT_GE(a.retry_after, 1.0);
          EXPECT_NE(a.message.find("serve.max_queue"), std::string::npos) << a.message;
          ++busy;
        }
      },
      [](caf::error& e) { FAIL() << caf::to_string(e); });
  EXPECT_GE(ok, 1);
  EXPECT_GE(busy, 1);
  EXPECT_EQ(ok + busy, 6);
}

TEST_F(service_fixture, AnIdleGroupExpires) {
  start(1);
  actors::env_service_options o;
  o.group_ttl = std::chrono::milliseconds(300);
  serve(o);
  auto g = ask<msg::group_answer>(msg::group_atom_v,
                                  msg::group_call{"vector_add", {code(candidate("grid_stride.cu"))}});
  ASSERT_EQ(g.status, msg::serve_status::ok) << g.message;
  EXPECT_TRUE(g.g.finished);
  EXPECT_EQ(ask<msg::group_answer>(msg::view_atom_v, g.g.id).status, msg::serve_status::ok);
  msg::serve_status st = msg::serve_status::ok;
  for (int i = 0; i < 100 && st == msg::serve_status::ok; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Asking keeps a group alive: look at the gauges instead until it is gone.
    caf::scoped_actor self{*sys};
    self->request(service, std::chrono::seconds(10), msg::stats_atom_v)
      .receive(
        [&](msg::service_stats& s) {
          if (s.groups_open == 0)
            st = msg::serve_status::not_found;
        },
        [](caf::error&) {});
  }
  EXPECT_EQ(ask<msg::group_answer>(msg::view_atom_v, g.g.id).status, msg::serve_status::not_found);
}

// A later turn submitted as SEARCH/REPLACE edits (a completion the HTTP layer found edits in) is
// applied to the attempt's previous code, as the trainer's gatekeeper does; one that does not
// apply, or a check (no previous turn), is the answer's fault.
TEST_F(service_fixture, AnEditTurnIsAppliedToTheAttemptsPreviousCode) {
  start(2);
  actors::env_service_options o;
  o.rollout.max_turns = 3;
  serve(o);
  auto bad = candidate("compile_error.cu");
  auto good = candidate("grid_stride.cu");
  auto g = ask<msg::group_answer>(msg::group_atom_v,
                                  msg::group_call{"vector_add", {code(bad), code(bad)}});
  ASSERT_EQ(g.status, msg::serve_status::ok) << g.message;
  auto edit_of = [](const std::string& text) {
    msg::submission s;
    s.edit = text;
    s.no_code_reason = "an edit answer needs a previous turn's code to change";
    s.tokens = static_cast<std::int64_t>(text.size());
    return s;
  };
  auto fixed = ask<msg::group_answer>(
    msg::turn_atom_v, msg::turn_call{g.g.id, 0, 2, edit_of(policy::render_edit(bad, good))});
  ASSERT_EQ(fixed.status, msg::serve_status::ok) << fixed.message;
  ASSERT_EQ(fixed.g.attempts[0].turns.size(), 2u);
  EXPECT_EQ(fixed.g.attempts[0].turns[1].v.st, env::status::correct);
  auto miss = ask<msg::group_answer>(
    msg::turn_atom_v,
    msg::turn_call{g.g.id, 1, 2,
                   edit_of("<<<<<<< SEARCH\nint no_such_line;\n=======\nint x;\n>>>>>>> REPLACE\n")});
  ASSERT_EQ(miss.status, msg::serve_status::ok) << miss.message;
  const auto& v = miss.g.attempts[1].turns[1].v;
  EXPECT_EQ(v.st, env::status::rejected);
  EXPECT_NE(v.feedback.find("edit block 1"), std::string::npos) << v.feedback;
  auto check = ask<msg::check_answer>(msg::check_atom_v,
                                      msg::check_call{"vector_add", edit_of(policy::render_edit(bad, good))});
  EXPECT_EQ(check.v.st, env::status::rejected);
  EXPECT_NE(check.v.feedback.find("previous turn"), std::string::npos) << check.v.feedback;
}
