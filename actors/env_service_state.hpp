// The environment service's state (actors/env_service.hpp), shared by the files that make up the
// service: env_service.cpp (the actor's behaviour, its job port to the pools, metrics and
// back-pressure), env_service_check.cpp (single checks), env_service_groups.cpp (opening groups,
// their turns, expiry, answering waiting calls) and env_service_answers.cpp (a group's view and
// its scores). Internal: only those files include it; everything in it runs on the service
// actor's thread.
#pragma once

#include "actors/env_service.hpp"
#include "actors/rollout_driver.hpp"
#include "common/result.hpp"
#include "messages/error_text.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace leap::actors::env_service_detail {

using clock_type = std::chrono::steady_clock;
using group_promise = caf::typed_response_promise<msg::group_answer>;
// A single check: a one-attempt, one-turn rollout of the driver.
using check_promise = caf::typed_response_promise<msg::check_answer>;

// What the rollout does not keep of one attempt (the driver keeps its jobs and build).
struct served_attempt {
  std::vector<std::optional<env::verdict>> verdicts; // per turn, once judged
  std::vector<std::int64_t> tokens;                  // per turn, as the client said
  std::vector<group_promise> waiting;                // turn calls waiting for this turn's end
};

// A group of the service: its client-facing name and what the client waits for; the rollout
// itself is the driver's, under the group's number.
struct served_group {
  std::string name;                   // 128 random bits, what the client names it by
  std::vector<served_attempt> att;
  std::vector<group_promise> opening; // the group call, until every turn-1 verdict is in
  clock_type::time_point touched = clock_type::now();
  std::optional<msg::scored_group> scores;
};

// Where an attempt stands for its client: ended, waiting for the client's next turn, or running.
msg::attempt_state state_of(const algo::rollout_attempt& at);

struct service_state {
  msg::env_service_actor::pointer self = nullptr;
  env_service_options opts;
  std::shared_ptr<const task_catalog> tasks;
  msg::compiler_pool_actor comp;
  msg::executor_pool_actor exec;
  std::map<std::uint64_t, served_group> groups;   // by the driver's number
  std::map<std::string, std::uint64_t> names;     // a group's name -> its number
  std::map<std::uint64_t, check_promise> checks;  // by the driver's number
  std::unique_ptr<rollout_driver> driver;
  std::uint64_t next_id = 1;
  std::uint32_t compile_jobs = 0, exec_jobs = 0;
  std::uint64_t expired = 0;
  double mean_compile = 0.5, mean_exec = 0.5; // seconds per job, smoothed (retry-after)

  std::string render(const caf::error& e) { return msg::error_text(e, self->system()); }

  // --- back-pressure ---
  std::uint32_t waiting() const {
    auto beyond = [](std::uint32_t jobs, int workers) {
      return jobs > static_cast<std::uint32_t>(workers) ? jobs - static_cast<std::uint32_t>(workers)
                                                        : 0u;
    };
    return beyond(compile_jobs, opts.compile_workers) + beyond(exec_jobs, opts.exec_workers);
  }
  bool busy() const { return opts.max_queue > 0 && waiting() >= static_cast<std::uint32_t>(opts.max_queue); }
  double retry_after() const {
    double s = mean_compile * std::max<double>(0, double(compile_jobs) - opts.compile_workers)
                 / std::max(1, opts.compile_workers)
               + mean_exec * std::max<double>(0, double(exec_jobs) - opts.exec_workers)
                   / std::max(1, opts.exec_workers);
    return std::max(1.0, std::ceil(s));
  }
  template <class Answer>
  Answer refusal(msg::serve_status st, std::string why) {
    Answer a;
    a.status = st;
    a.message = std::move(why);
    if (st == msg::serve_status::busy)
      a.retry_after = retry_after();
    return a;
  }
  std::string busy_text() const {
    return std::to_string(waiting()) + " jobs are waiting (serve.max_queue = "
           + std::to_string(opts.max_queue) + ")";
  }

  // --- metrics (env_service.cpp) ---
  void record_build(const msg::compile_reply& r);
  void record_verdict(const env::verdict& v);

  // --- jobs (every compile and execute goes through these: counted for back-pressure) ---
  // One job of a pool, counted in `in_flight` until its reply or error.
  template <class Reply, class Pool, class Atom, class Request>
  void job(const Pool& pool, std::uint32_t& in_flight, std::chrono::milliseconds timeout,
           Atom atom, Request req, job_port::done_fn<Reply> done) {
    ++in_flight;
    self->request(pool, timeout, atom, std::move(req))
      .then(
        [&in_flight, done](Reply& r) mutable {
          --in_flight;
          done(std::move(r));
        },
        [this, &in_flight, done](caf::error& e) mutable {
          --in_flight;
          done(make_error(render(e)));
        });
  }

  // The rollout driver over the pools, with its events routed to checks and groups
  // (env_service.cpp).
  void init();
  msg::service_stats stats();

  // --- a check (env_service_check.cpp) ---
  void check(msg::check_call& call, check_promise rp);
  // Answers the check numbered `id` with its verdict, or its failure; false when `id` is a group.
  bool finish_check(std::uint64_t id, const env::verdict& v, const msg::exec_reply* run);
  bool drop_check(std::uint64_t id, const std::string& why);

  // --- groups (env_service_groups.cpp) ---
  void open_group(msg::group_call& call, group_promise rp);
  // The attempt's next turn arrived: the rollout's sampled event.
  std::vector<algo::rollout_action> submit(std::uint64_t id, int a, msg::submission s);
  // The number of the group the client names; 0 when there is none.
  std::uint64_t number_of(const std::string& name) const;
  void turn(msg::turn_call& call, group_promise rp);
  void view(const std::string& name, group_promise rp);
  // Answers the group call once no turn-1 job is left, and each turn call once its turn is over.
  void settle(std::uint64_t id);
  // Groups idle past the TTL with nobody waiting go; their jobs in flight are cancelled.
  void expire();

  // --- a group's answer (env_service_answers.cpp) ---
  // The judge's arithmetic over the finished group.
  void score(std::uint64_t id);
  // The group's view as its client sees it: attempts, turns, verdicts, next prompts, scores.
  msg::group_answer answer(std::uint64_t id);
};

} // namespace leap::actors::env_service_detail
