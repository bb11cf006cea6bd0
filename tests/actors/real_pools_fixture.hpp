// A fixture with the real compiler and executor pools (nvcc + the CPU emulation) over the test
// cache, and the trainer's path for one group: the gatekeeper with a scripted generator pool (a
// test double with the generator pool's typed interface that answers fixed kernels, so the
// verdicts are known in advance), the test in the judge's place. Shared by the gatekeeper's and
// the environment service's tests. Test code only; the test's main thread.
#pragma once

#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "actors/gatekeeper.hpp"
#include "common/fs.hpp"
#include "messages/interfaces.hpp"
#include "runtime/pipeline/services.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include <algorithm>

namespace leap::test {

inline std::string candidate(const std::string& name) {
  auto text = read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text ? *text : std::string();
}

// A source nobody compiled before (a fresh comment changes its content address).
inline std::string uncached(const std::string& src) {
  return "// nonce " + std::to_string(os_random_u64()) + "\n" + src;
}

inline std::vector<int> bytes_of(const std::string& s) {
  return std::vector<int>(s.begin(), s.end());
}

struct script {
  std::vector<std::string> turn1; // one completion per attempt, in order
  std::string later;              // every later-turn completion
  bool later_raw = false;         // `later` as is (e.g. an edit answer), not in a ```cuda block
};

inline msg::generator_pool_actor::behavior_type scripted_generators(msg::generator_pool_actor::pointer,
                                                             std::shared_ptr<script> sc) {
  return {
    [sc](msg::generate_atom, msg::generate_request& r) -> msg::generate_reply {
      msg::generate_reply rep;
      rep.id = r.id;
      std::size_t k = 0;
      for (std::size_t i = 0; i < r.prompts.size(); ++i)
        for (int j = 0; j < r.samples_per_prompt; ++j, ++k) {
          auto text = r.samples_per_prompt == 1 && sc->later_raw
                        ? sc->later
                        : "```cuda\n" + (r.samples_per_prompt > 1 ? sc->turn1.at(k) : sc->later) + "```";
          auto ids = bytes_of(text);
          rep.samples.push_back({ids, std::vector<float>(ids.size(), -0.5f), "eos"});
        }
      return rep;
    },
    [](msg::cancel_atom, std::uint64_t) {},
    [](msg::stats_atom) { return msg::pool_stats{}; },
  };
}

struct gatekeeper_fixture : ::testing::Test {
  std::unique_ptr<runtime::services> svc;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  msg::compiler_pool_actor compilers;
  msg::executor_pool_actor executors;

  void start(int compile_workers) {
    auto c = config::defaults();
    ASSERT_TRUE(config::apply_override(c, "environment.backend=cpu").ok());
    c.environment.cache_dir = LEAP_TEST_CACHE_DIR;
    c.compiler.workers = compile_workers;
    c.executor.workers = 2;
    c.executor.trials = 1;
    auto s = runtime::make_services(c);
    ASSERT_TRUE(s.ok()) << s.message();
    svc = std::move(*s);
    msg::register_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    actors::pool_options co;
    co.workers = static_cast<std::size_t>(compile_workers);
    compilers = actors::spawn_compiler_pool(*sys, co, svc->compiler, svc->tasks);
    actors::pool_options eo;
    eo.workers = 2;
    executors = actors::spawn_executor_pool(*sys, eo, svc->executor, svc->tasks, svc->cache_dir);
  }

  // Builds sources into the cache first, so the test controls which compiles are slow.
  void prewarm(const std::vector<std::pair<std::string, bool>>& sources) {
    caf::scoped_actor self{*sys};
    std::uint64_t id = 1000000;
    for (auto& [src, ref] : sources)
      self->request(compilers, std::chrono::minutes(5), msg::compile_atom_v,
                    msg::compile_request{id++, "vector_add", src, env::backend::cpu, ref})
        .receive([](msg::compile_reply&) {}, [](caf::error& e) { FAIL() << caf::to_string(e); });
  }

  msg::group_result run_group(std::shared_ptr<script> sc, int group_size, int max_turns,
                              algo::dcp_config dcp = {}, bool cancel_pruned_turn1 = false) {
    caf::scoped_actor self{*sys};
    auto gen = sys->spawn(scripted_generators, sc);
    actors::gatekeeper_options o;
    o.rollout.group_size = group_size;
    o.rollout.max_turns = max_turns;
    o.rollout.dcp = dcp;
    o.rollout.cancel_pruned_turn1 = cancel_pruned_turn1;
    o.backend = env::backend::cpu;
    o.codec.encode = [](const std::string& task, const std::vector<std::string>& codes,
                        const std::vector<std::string>&) {
      return bytes_of(task + " turn " + std::to_string(codes.size() + 1));
    };
    o.codec.decode = [](const std::vector<int>& ids) { return std::string(ids.begin(), ids.end()); };
    // This test takes the judge's place: the finished group comes to it.
    auto gk = actors::spawn_gatekeeper(*sys, o, svc->tasks, gen, compilers, executors,
                                       caf::actor_cast<msg::judge_actor>(self));
    self->send(gk, msg::group_atom_v, msg::group_start{1, "vector_add", 0, 0});
    msg::group_result out;
    self->receive([&](msg::finished_atom, msg::group_result& r) { out = std::move(r); },
                  caf::after(std::chrono::minutes(5)) >> [] { FAIL() << "no group result"; });
    self->send_exit(gk, caf::exit_reason::user_shutdown);
    self->send_exit(gen, caf::exit_reason::user_shutdown);
    return out;
  }

  msg::pool_stats compile_stats() {
    caf::scoped_actor self{*sys};
    msg::pool_stats s;
    self->request(compilers, std::chrono::seconds(10), msg::stats_atom_v)
      .receive([&](msg::pool_stats& r) { s = r; }, [](caf::error&) {});
    return s;
  }

  void TearDown() override {
    if (sys) {
      caf::anon_send_exit(compilers, caf::exit_reason::user_shutdown);
      caf::anon_send_exit(executors, caf::exit_reason::user_shutdown);
      sys.reset();
    }
  }
};

} // namespace leap::test
