// The one driver of rollouts: it carries each group's attempts through compile, the task's
// reference build, execute and the pure rollout state machine (algo/rollout.hpp), and turns every
// build and run into a verdict with one function (actors/verdicts.hpp, verdict_of). Its owners are
// the gatekeeper (which samples each turn from the generator pool) and the environment service
// (whose client sends each turn, and whose single checks are one-attempt, one-turn groups).
//
// What stays with the owner: where the turns come from (the `generate` event), how jobs travel
// (the `job_port`: the gatekeeper meters them and, in sync mode, holds them behind its stage
// barrier; the service counts them for back-pressure), and what it records of a turn or a
// finished group. A job that fails inside leap on every try drops its attempt (the `dropped`
// event says why); it never becomes a verdict. Each task's reference is built once per driver
// (actors/reference_cache.hpp), when its first group opens or when an attempt first needs it
// (rollout_driver_options::reference_at_open).
//
// Plain C++, no CAF: owned by one actor and used on that actor's thread only; every port call and
// event runs on that thread (replies must be delivered there too).
#pragma once

#include "actors/reference_cache.hpp"
#include "algo/rollout.hpp"
#include "common/result.hpp"
#include "env/task.hpp"
#include "env/verdict.hpp"
#include "messages/env_messages.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace leap::actors {

// How the owner sends a job to its pool. `done` runs once, on the owner's thread, with the pool's
// reply or the text of its failure.
struct job_port {
  template <class Reply>
  using done_fn = std::function<void(result<Reply>)>;
  // Lets attempt `attempt`'s job of `stage` (compiling or executing) start: `start` at once (the
  // default when unset), or later, once the owner's sync-mode barrier lets that stage run. Before
  // a later start the owner asks rollout_driver::awaiting() whether the attempt still wants it.
  std::function<void(std::uint64_t group, int attempt, algo::attempt_phase stage,
                     std::function<void()> start)>
    admit;
  // An admitted job sent nothing after all: its attempt ended, or its task's reference did not
  // build, while it waited for that reference (the barrier counts one request fewer).
  std::function<void()> not_sent;
  // An attempt's build (attempt >= 0), or a task's reference build (attempt = -1, group = 0),
  // which is never admitted: it goes out at once.
  std::function<void(std::uint64_t group, int attempt, msg::compile_request,
                     done_fn<msg::compile_reply>)>
    compile;
  std::function<void(std::uint64_t group, int attempt, msg::exec_request,
                     done_fn<msg::exec_reply>)>
    execute;
  // A queued or running job of a pruned or closed attempt; `stage` is compiling or executing.
  std::function<void(algo::attempt_phase stage, std::uint64_t job)> cancel;
};

// What the driver tells its owner. Unset events are skipped.
struct driver_events {
  // The rollout wants the next turn of act.attempts (turn act.turn). The owner samples it (and
  // later calls sampled() or perform()); actions it causes now go into `more`.
  std::function<void(std::uint64_t group, const algo::rollout_action& act,
                     std::vector<algo::rollout_action>& more)>
    generate;
  // An attempt's build answered (for the owner's counters: compiles, cache hits).
  std::function<void(std::uint64_t group, int attempt, const msg::compile_reply&)> built;
  // The verdict of the attempt's current turn; `run` is the executor's reply when it ran.
  std::function<void(std::uint64_t group, int attempt, const env::verdict&,
                     const msg::exec_reply* run)>
    judged;
  // The infrastructure lost the attempt (every try of a job failed, the reference did not build).
  std::function<void(std::uint64_t group, int attempt, const std::string& why)> dropped;
  // A pruned straggler's job was cancelled.
  std::function<void(std::uint64_t group, int attempt)> cancelled;
  // Every attempt ended; the group stays in the driver until the owner calls close().
  std::function<void(std::uint64_t group)> finished;
  // A batch of actions was carried out (the service answers the calls that wait on it here).
  std::function<void(std::uint64_t group)> settled;
};

struct rollout_driver_options {
  env::backend backend = env::backend::cpu;
  // Queue order of the jobs: the group's id (older groups first: the learner waits for them),
  // or 0 for all (first come, first served).
  bool older_groups_first = true;
  // Start a task's reference build when its first group opens (it overlaps the candidates'
  // compiles: a single check waits for the slower of the two, not for both in turn), or only
  // when an attempt first needs it (no build for a task whose attempts all fail to compile).
  bool reference_at_open = true;
};

// What one group asks beyond its rollout (a check of `leap check` or `leap tasks verify`).
struct driven_group_options {
  bool dump_inputs = false;            // its runs keep their inputs and outputs
  // Its attempts' code is the task's own reference: built as the reference (no guards), and that
  // build then serves as the task's reference; a build that fails fails the reference (the
  // attempt is dropped with the reason), it is no verdict on a candidate.
  bool candidate_is_reference = false;
};

class rollout_driver {
public:
  rollout_driver(rollout_driver_options opts, job_port port, driver_events events);

  // Opens group `id` (unique per driver, > 0) on `task` (which must outlive the group), and with
  // reference_at_open starts its reference build. Its rollout has not started: the owner calls rollout(id).start() (or
  // feeds it the client's samples) and perform()s the actions. False when `id` is open already.
  bool open(std::uint64_t id, const algo::rollout_config& cfg, const env::task_spec& task,
            driven_group_options go = {});
  // Cancels the group's jobs in flight and forgets it. No event follows.
  void close(std::uint64_t id);

  bool contains(std::uint64_t id) const { return groups_.count(id) != 0; }
  std::size_t size() const { return groups_.size(); }
  // The group's rollout and task; the group must be open.
  algo::rollout& rollout(std::uint64_t id) { return groups_.at(id).r; }
  const env::task_spec& task(std::uint64_t id) const { return *groups_.at(id).task; }
  // Attempt `a` of group `id` is live and in phase `ph` (a reply or a held job is still wanted).
  bool awaiting(std::uint64_t id, int a, algo::attempt_phase ph) const;

  // Carries out the rollout's actions in order, then the actions they cause; `settled` follows.
  void perform(std::uint64_t id, std::vector<algo::rollout_action> acts);
  // The infrastructure lost attempt `a` (a generation that failed, say).
  void drop(std::uint64_t id, int a, const std::string& why);

private:
  struct attempt_jobs {
    std::uint64_t job = 0;                      // compile or execute job in flight (0: none)
    algo::attempt_phase stage = algo::attempt_phase::compiling;
    msg::compile_reply build;                   // the current turn's build, once it is ok
  };
  struct group {
    algo::rollout r;
    const env::task_spec* task = nullptr;
    driven_group_options go;
    std::vector<attempt_jobs> att;
    group(const algo::rollout_config& c, const env::task_spec& t, driven_group_options o)
        : r(c), task(&t), go(o), att(static_cast<std::size_t>(c.group_size)) {}
  };

  group* find(std::uint64_t id);
  void run(std::uint64_t id, const algo::rollout_action& act,
           std::vector<algo::rollout_action>& more);
  void admit(std::uint64_t id, int a, algo::attempt_phase stage, std::function<void()> start);
  void not_sent();
  void compile(std::uint64_t id, int a);
  void on_built(std::uint64_t id, int a, result<msg::compile_reply>& r);
  void execute(std::uint64_t id, int a);
  void on_ran(std::uint64_t id, int a, result<msg::exec_reply>& r);
  void judge(std::uint64_t id, int a, const env::verdict& v, const msg::exec_reply* run);
  void cancel(group& g, int a);
  void with_reference(const env::task_spec& task, reference_cache::callback cb);
  std::uint64_t priority(std::uint64_t id) const { return opts_.older_groups_first ? id : 0; }

  rollout_driver_options opts_;
  job_port port_;
  driver_events ev_;
  std::map<std::uint64_t, group> groups_;
  reference_cache refs_;
  std::uint64_t next_job_ = 1;
};

} // namespace leap::actors
