// Every registered message type survives CAF's binary serializer unchanged (so it can cross
// processes), enum fields included (an out-of-range value is a load error), and the type-id
// block registers them all.
#include "messages/interfaces.hpp"

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <limits>
#include <optional>

using namespace leap;

namespace {

struct fixture : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  void SetUp() override {
    msg::register_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
  template <class T>
  T roundtrip(T x) {
    std::vector<char> buf;
    caf::binary_serializer sink{*sys, buf};
    auto e1 = sink(x);
    EXPECT_FALSE(e1) << sys->render(e1);
    T y;
    caf::binary_deserializer source{*sys, buf};
    auto e2 = source(y);
    EXPECT_FALSE(e2) << sys->render(e2);
    return y;
  }
};

env::verdict sample_verdict() {
  env::verdict v;
  v.task = "softmax_rows";
  v.backend = env::backend::cuda;
  v.st = env::status::wrong_answer;
  v.reason = "mismatch";
  v.max_abs_error = 3.25;
  v.max_rel_error = 0.5;
  v.mismatch_index = 17;
  v.mismatch_output = "y";
  v.mismatch_size_set = 1;
  v.expected = 0.5;
  v.actual = 3.75;
  v.mismatches = 12;
  v.trials_run = 4;
  v.trials_passed = 3;
  v.diagnostics = "diag";
  v.timed = true;
  v.candidate_ms = 0.125;
  v.reference_ms = 1.5;
  v.speedup = 12;
  v.compile_seconds = 0.9;
  v.run_seconds = 0.4;
  v.cached = true;
  v.emulation_unsupported = true;
  v.flags = "excessive_speedup";
  v.feedback = "wrong result";
  v.compile_stages = {0.31, 0.05, 0.001, 0.12, 0.02, 0.03, 0.004};
  return v;
}

} // namespace

TEST_F(fixture, VerdictRoundTrips) {
  auto v = roundtrip(sample_verdict());
  auto w = sample_verdict();
  EXPECT_EQ(env::to_json(v), env::to_json(w));
  EXPECT_EQ(v.st, env::status::wrong_answer);
}

TEST_F(fixture, CompileMessagesRoundTrip) {
  msg::compile_request rq{42, "matmul", "__global__ void k(){}", env::backend::cuda, true};
  auto r = roundtrip(rq);
  EXPECT_EQ(r.id, 42u);
  EXPECT_EQ(r.task, "matmul");
  EXPECT_EQ(r.source, rq.source);
  EXPECT_EQ(r.backend, env::backend::cuda);
  EXPECT_TRUE(r.reference);
  msg::compile_reply rp{7, env::build_status::compile_error, "solution.cu(1): error", "nvcc", 1.5,
                        {1.2, 0.3}, true, "abc", 2};
  auto p = roundtrip(rp);
  EXPECT_EQ(p.id, 7u);
  EXPECT_EQ(p.status, env::build_status::compile_error);
  EXPECT_EQ(p.diagnostics, rp.diagnostics);
  EXPECT_EQ(p.stage, "nvcc");
  EXPECT_DOUBLE_EQ(p.seconds, 1.5);
  EXPECT_EQ(p.stages, rp.stages);
  EXPECT_TRUE(p.cached);
  EXPECT_EQ(p.key, "abc");
  EXPECT_EQ(p.attempts, 2);
}

TEST_F(fixture, ExecMessagesAndStatsRoundTrip) {
  msg::exec_request rq{9, "relu", env::backend::cpu, "3f2a", "9c1b", true};
  auto r = roundtrip(rq);
  EXPECT_EQ(r.id, 9u);
  EXPECT_EQ(r.candidate_build, "3f2a");
  EXPECT_EQ(r.reference_build, "9c1b");
  EXPECT_TRUE(r.dump_inputs);
  msg::exec_reply rp{9, sample_verdict(), "/kept", 123456789012345ull, 1};
  auto p = roundtrip(rp);
  EXPECT_EQ(env::to_json(p.v), env::to_json(rp.v));
  EXPECT_EQ(p.kept_dir, "/kept");
  EXPECT_EQ(p.seed, 123456789012345ull);
  msg::pool_stats s{"compiler_pool", 2, 1, 5, 100, 40, 3, 1, 1, 0, 2};
  auto q = roundtrip(s);
  EXPECT_EQ(q.pool, "compiler_pool");
  EXPECT_EQ(q.completed, 100u);
  EXPECT_EQ(q.cache_hits, 40u);
  EXPECT_EQ(q.emulation_unsupported, 2u);
}

TEST_F(fixture, ClusterMessagesRoundTrip) {
  msg::node_exec_reply r;
  r.rep.id = 4;
  r.rep.v = sample_verdict();
  r.missing_builds = {"aa11", "bb22"};
  auto p = roundtrip(r);
  EXPECT_EQ(p.rep.id, 4u);
  EXPECT_EQ(p.missing_builds, r.missing_builds);
  EXPECT_EQ(env::to_json(p.rep.v), env::to_json(r.rep.v));
  msg::cluster_status s;
  msg::node_row row;
  row.name = "10.0.0.2:7100";
  row.state = msg::node_state::lost;
  row.done = 12;
  row.rerun = 3;
  row.busy_seconds = 4.5;
  row.problem = "cannot connect";
  s.nodes = {row};
  s.queued_execute = 2;
  auto q = roundtrip(s);
  ASSERT_EQ(q.nodes.size(), 1u);
  EXPECT_EQ(q.nodes[0].name, row.name);
  EXPECT_EQ(q.nodes[0].state, msg::node_state::lost);
  EXPECT_EQ(q.nodes[0].rerun, 3u);
  EXPECT_DOUBLE_EQ(q.nodes[0].busy_seconds, 4.5);
  EXPECT_EQ(q.nodes[0].problem, row.problem);
  EXPECT_EQ(q.queued_execute, 2u);
  msg::node_info info{"h:1", msg::this_build_identity(), env::backend::cuda, 4, 2};
  auto i = roundtrip(info);
  EXPECT_EQ(i.identity.messages, info.identity.messages);
  EXPECT_EQ(i.backend, env::backend::cuda);
  EXPECT_EQ(i.execute_workers, 2u);
}

TEST_F(fixture, ServeMessagesRoundTrip) {
  msg::check_call c{"vector_add", {false, "", "no fenced block", 12, "<<<<<<< SEARCH"}};
  auto pc = roundtrip(c);
  EXPECT_EQ(pc.task, "vector_add");
  EXPECT_FALSE(pc.s.has_code);
  EXPECT_EQ(pc.s.no_code_reason, "no fenced block");
  EXPECT_EQ(pc.s.edit, "<<<<<<< SEARCH");
  EXPECT_EQ(pc.s.tokens, 12);
  msg::group_answer a;
  a.status = msg::serve_status::busy;
  a.retry_after = 3;
  a.g.id = "ab12";
  a.g.dcp = algo::group_decision::prune_easy;
  msg::attempt_view av;
  av.attempt = 1;
  av.state = msg::attempt_state::awaiting_turn;
  av.end = algo::attempt_end::none;
  av.turns.push_back(msg::turn_view{1, true, sample_verdict()});
  av.next_turn = 2;
  av.next_prompt = "again";
  av.advantages = {0.5, -0.25};
  a.g.attempts = {av};
  auto p = roundtrip(a);
  EXPECT_EQ(p.status, msg::serve_status::busy);
  EXPECT_DOUBLE_EQ(p.retry_after, 3);
  EXPECT_EQ(p.g.id, "ab12");
  EXPECT_EQ(p.g.dcp, algo::group_decision::prune_easy);
  ASSERT_EQ(p.g.attempts.size(), 1u);
  EXPECT_EQ(p.g.attempts[0].state, msg::attempt_state::awaiting_turn);
  EXPECT_EQ(env::to_json(p.g.attempts[0].turns[0].v), env::to_json(sample_verdict()));
  EXPECT_EQ(p.g.attempts[0].next_prompt, "again");
  EXPECT_EQ(p.g.attempts[0].advantages, av.advantages);
  msg::service_stats st;
  st.groups_open = 4;
  st.waiting_jobs = 2;
  st.compiler.queued = 7;
  auto ps = roundtrip(st);
  EXPECT_EQ(ps.groups_open, 4u);
  EXPECT_EQ(ps.waiting_jobs, 2u);
  EXPECT_EQ(ps.compiler.queued, 7u);
}

TEST_F(fixture, TypeIdBlockCoversEveryMessage) {
  EXPECT_EQ(caf::id_block::leap::end - caf::id_block::leap::begin, 38);
  EXPECT_STREQ(caf::type_name<msg::compile_request>::value, "leap::msg::compile_request");
  // Registered types can travel inside a caf::message and be serialized there too.
  auto m = caf::make_message(msg::compile_atom_v,
                             msg::compile_request{1, "relu", "src", env::backend::cpu, false});
  std::vector<char> buf;
  caf::binary_serializer sink{*sys, buf};
  auto err = sink(m);
  EXPECT_FALSE(err) << sys->render(err);
  caf::message back;
  caf::binary_deserializer source{*sys, buf};
  err = source(back);
  ASSERT_FALSE(err) << sys->render(err);
  ASSERT_TRUE((back.match_elements<msg::compile_atom, msg::compile_request>()));
  EXPECT_EQ(back.get_as<msg::compile_request>(1).source, "src");
}

TEST_F(fixture, TrainingMessagesRoundTrip) {
  msg::generate_request gr{5, 77, {{1, 2, 3}, {4, 5}}, 1, 0.7, 0.9, 128, 99};
  auto g = roundtrip(gr);
  EXPECT_EQ(g.group_id, 77u);
  EXPECT_EQ(g.prompts, gr.prompts);
  EXPECT_DOUBLE_EQ(g.top_p, 0.9);
  EXPECT_EQ(g.seed, 99u);
  msg::generate_reply rp;
  rp.id = 5;
  rp.samples = {{{7, 8, 9}, {-0.5f, -1.25f, -0.125f}, "eos"}};
  rp.policy_version = 3;
  rp.worker = 1;
  auto r = roundtrip(rp);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].tokens, (std::vector<int>{7, 8, 9}));
  EXPECT_EQ(r.samples[0].logprobs, rp.samples[0].logprobs);
  EXPECT_EQ(r.samples[0].finish, "eos");
  EXPECT_EQ(r.policy_version, 3);
  auto w = roundtrip(msg::weights_update{4, std::string("\x00\x01st", 4)});
  EXPECT_EQ(w.version, 4);
  EXPECT_EQ(w.safetensors.size(), 4u);
  msg::turn_record t{{1}, {2, 3}, {-0.5f, -0.25f}, 2, true, env::status::wrong_answer, "mismatch",
                     true, 1.5, 0.25, 1.75, "__global__ void k() {}\n", "wrong result for output y"};
  msg::group_result gres;
  gres.group_id = 9;
  gres.task = "relu";
  gres.epoch = 1;
  gres.index = 3;
  gres.dcp = algo::group_decision::expand;
  gres.activated = true;
  gres.trajectories = {{{t, t}, 2, algo::attempt_end::solved, ""},
                       {{t}, 0, algo::attempt_end::dropped, "compiler_pool: job 4 failed on 2 tries"}};
  gres.attempts = 3;
  gres.compiles = 2;
  gres.cache_hits = 1;
  gres.cancelled = 1;
  gres.compiles_later_turns = 1;
  msg::scored_group sg{gres, {0.5, -0.5}, {{0.5, 0.5}, {}}};
  auto s2 = roundtrip(sg);
  EXPECT_EQ(s2.group.task, "relu");
  ASSERT_EQ(s2.group.trajectories.size(), 2u);
  EXPECT_EQ(s2.group.dcp, algo::group_decision::expand);
  EXPECT_EQ(s2.group.trajectories[0].turns[1].status, env::status::wrong_answer);
  EXPECT_TRUE(s2.group.trajectories[0].turns[1].judged);
  EXPECT_DOUBLE_EQ(s2.group.trajectories[0].turns[1].t_verdict, 1.75);
  EXPECT_EQ(s2.group.trajectories[0].turns[1].code, t.code);
  EXPECT_EQ(s2.group.trajectories[0].turns[1].feedback, t.feedback);
  EXPECT_EQ(s2.group.trajectories[0].end, algo::attempt_end::solved);
  EXPECT_EQ(s2.group.trajectories[1].end, algo::attempt_end::dropped);
  EXPECT_EQ(s2.group.trajectories[1].end_reason, gres.trajectories[1].end_reason);
  EXPECT_EQ(s2.advantages, sg.advantages);
  msg::step_report rep;
  rep.step = 12;
  rep.acc_at_3 = 0.75;
  rep.tasks = {"relu", "matmul"};
  rep.epochs = {0, 1};
  rep.indices = {4, 2};
  rep.outcome = msg::step_outcome::failed;
  rep.error = "learner step 12 failed: grpo_step: index out of range";
  rep.recovery = 0.5;
  rep.dropped = 2;
  rep.unsupported = 1;
  rep.checkpoint = msg::checkpoint_state::saved;
  msg::group_summary gsum;
  gsum.task = "relu";
  gsum.dcp = algo::group_decision::no_verdicts;
  gsum.attempts = {{algo::attempt_end::unsupported, "", 0, 0.0, {0.0}, {{true, env::status::rejected, "emulation_unsupported", 40}}}};
  rep.group_details = {gsum};
  auto q = roundtrip(rep);
  EXPECT_EQ(q.outcome, msg::step_outcome::failed);
  EXPECT_EQ(q.error, rep.error);
  EXPECT_DOUBLE_EQ(q.recovery, 0.5);
  EXPECT_EQ(q.dropped, 2u);
  EXPECT_EQ(q.checkpoint, msg::checkpoint_state::saved);
  ASSERT_EQ(q.group_details.size(), 1u);
  EXPECT_EQ(q.group_details[0].dcp, algo::group_decision::no_verdicts);
  ASSERT_EQ(q.group_details[0].attempts.size(), 1u);
  EXPECT_EQ(q.group_details[0].attempts[0].end, algo::attempt_end::unsupported);
  EXPECT_EQ(q.group_details[0].attempts[0].turns[0].reason, "emulation_unsupported");
  EXPECT_EQ(q.group_details[0].attempts[0].turns[0].tokens, 40);
  EXPECT_EQ(q.step, 12);
  EXPECT_DOUBLE_EQ(q.acc_at_3, 0.75);
  EXPECT_EQ(q.tasks, rep.tasks);
  EXPECT_EQ(q.indices, rep.indices);
  auto gs = roundtrip(msg::group_start{3, "softmax_rows", 2, 5});
  EXPECT_EQ(gs.task, "softmax_rows");
  EXPECT_EQ(gs.index, 5);
}

TEST_F(fixture, SmallMessagesOfTheRolesRoundTrip) {
  auto u = roundtrip(msg::stage_usage{12.5, 3.0, 6.25, 1.5});
  EXPECT_DOUBLE_EQ(u.elapsed_seconds, 12.5);
  EXPECT_DOUBLE_EQ(u.compile, 6.25);
  auto r = roundtrip(msg::save_request{"/runs/x/checkpoint", "{\"seed\": 1}"});
  EXPECT_EQ(r.dir, "/runs/x/checkpoint");
  EXPECT_EQ(r.extra_json, "{\"seed\": 1}");
  auto c = roundtrip(msg::checkpoint_saved{"/runs/x/checkpoint", 7});
  EXPECT_EQ(c.step, 7);
}

// An enum value out of range never becomes an invalid enum: loading it is an error.
TEST_F(fixture, OutOfRangeEnumIsALoadError) {
  msg::compile_reply good;
  good.status = env::build_status::ok;
  std::vector<char> buf;
  caf::binary_serializer sink{*sys, buf};
  ASSERT_FALSE(sink(good));
  // The layout: id (8 bytes), then the status byte.
  ASSERT_GT(buf.size(), 9u);
  buf[8] = static_cast<char>(200);
  msg::compile_reply back;
  caf::binary_deserializer source{*sys, buf};
  auto err = source(back);
  ASSERT_TRUE(err);
  EXPECT_NE(sys->render(err).find("leap_build_status"), std::string::npos) << sys->render(err);
}

namespace {

// The same bits (NaN payload and sign included): what "travels faithfully" means for a float.
template <class F>
bool same_bits(F a, F b) {
  return std::memcmp(&a, &b, sizeof(F)) == 0;
}

// Every kind of IEEE value a verdict or a sample can hold, in one verdict, one compile reply and
// one generate reply; true when all come back with the same bits.
bool non_finite_values_travel(caf::actor_system& sys) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::numeric_limits<double>::denorm_min();
  env::verdict v = sample_verdict();
  v.max_abs_error = inf; // the comparison's answer for an unwritten (NaN-poisoned) output
  v.max_rel_error = -inf;
  v.expected = tiny;
  v.actual = -nan;
  v.speedup = nan;
  v.compile_stages = {nan, inf, -inf, -0.0, tiny, 1e308};
  msg::compile_reply c;
  c.seconds = inf;
  c.stages = v.compile_stages;
  msg::generate_reply g;
  g.samples = {{{1, 2, 3},
                {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                 std::numeric_limits<float>::denorm_min()},
                "eos"}};
  msg::exec_reply e;
  e.v = v;
  auto bytes_of = [&](auto x) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    if (auto err = sink(x))
      return std::optional<decltype(x)>();
    decltype(x) y;
    caf::binary_deserializer source{sys, buf};
    if (auto err = source(y))
      return std::optional<decltype(x)>();
    return std::optional<decltype(x)>(y);
  };
  auto e2 = bytes_of(e);
  auto c2 = bytes_of(c);
  auto g2 = bytes_of(g);
  if (!e2 || !c2 || !g2)
    return false;
  bool ok = same_bits(e2->v.max_abs_error, v.max_abs_error)
            && same_bits(e2->v.max_rel_error, v.max_rel_error)
            && same_bits(e2->v.expected, v.expected) && same_bits(e2->v.actual, v.actual)
            && same_bits(e2->v.speedup, v.speedup) && same_bits(c2->seconds, c.seconds)
            && e2->v.compile_stages.size() == v.compile_stages.size()
            && c2->stages.size() == c.stages.size() && g2->samples.size() == 1
            && g2->samples[0].logprobs.size() == 3;
  for (std::size_t i = 0; ok && i < v.compile_stages.size(); ++i)
    ok = same_bits(e2->v.compile_stages[i], v.compile_stages[i])
         && same_bits(c2->stages[i], c.stages[i]);
  for (std::size_t i = 0; ok && i < 3; ++i)
    ok = same_bits(g2->samples[0].logprobs[i], g.samples[0].logprobs[i]);
  return ok;
}

} // namespace

// NaN, infinities, -0 and subnormals cross processes with their bits (CAF 0.17's own
// float encoding loops forever on an infinity, on the multiplexer thread, and mangles a NaN).
// Run in a child with an alarm, so a hang fails the test instead of stalling it.
TEST_F(fixture, NonFiniteFloatsTravelBitForBit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
    {
      ::alarm(10);
      std::_Exit(non_finite_values_travel(*sys) ? 0 : 3);
    },
    ::testing::ExitedWithCode(0), "");
}
