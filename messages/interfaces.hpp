// The typed interface of every role of the pipeline (docs/design.md "Roles and their messages").
// No untyped handle passes between roles: whoever holds one of these can send exactly the
// messages listed, and the compiler checks it. Who implements each:
//   compiler / executor / generator pool  actors/supervised_pool.hpp (+ *_pool.cpp); bench's
//                                         latency models and tests' doubles implement the same;
//                                         on a cluster, facades over actors/cluster.cpp
//   weights sink                          actors/generator_pool.cpp (the generators' replicas);
//                                         on a cluster, a facade that fans out to the nodes
//   node                                  actors/node.cpp (`leap node`, or the head's own pools)
//   head (registration and status)        actors/cluster.cpp, published on cluster.listen
//   gatekeeper                            actors/gatekeeper.cpp
//   judge                                 actors/judge.cpp; `leap eval`'s collector
//                                         (actors/eval_collector.cpp) takes finished groups too
//   learner                               actors/learner.cpp; bench's latency-model learner
//   trainer                               actors/trainer.cpp
//   environment service                   actors/env_service.cpp (`leap serve`)
// Include where typed handles are held (actors/, runtime/pipeline/, runtime/cluster/, bench/,
// tests/).
#pragma once

#include "messages/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

namespace leap::msg {

// A supervised pool of workers: jobs by request (a job that fails inside leap is retried, then
// fails the request with an error), cancel by job id, statistics.
template <class Atom, class Request, class Reply>
using pool_actor = caf::typed_actor<
  typename caf::replies_to<Atom, Request>::template with<Reply>,
  caf::reacts_to<cancel_atom, std::uint64_t>,
  caf::replies_to<stats_atom>::with<pool_stats>>;

using compiler_pool_actor = pool_actor<compile_atom, compile_request, compile_reply>;
using executor_pool_actor = pool_actor<exec_atom, exec_request, exec_reply>;
using generator_pool_actor = pool_actor<generate_atom, generate_request, generate_reply>;

// Takes the learner's published policy versions and hands them to the generators' replicas.
using weights_sink_actor = caf::typed_actor<caf::reacts_to<weights_atom, weights_update>>;

// Takes every learner step's report; (stop_atom) saves a checkpoint and ends the run.
using trainer_actor = caf::typed_actor<
  caf::reacts_to<report_atom, step_report>,
  caf::reacts_to<stop_atom>>;

// Takes scored groups (one learner step per B of them); (subscribe_atom, trainer) names the
// receiver of the step reports; (save_atom, request) writes a checkpoint or answers an error.
using learner_actor = caf::typed_actor<
  caf::reacts_to<scored_atom, scored_group>,
  caf::reacts_to<subscribe_atom, trainer_actor>,
  caf::replies_to<save_atom, save_request>::with<checkpoint_saved>>;

// Takes every finished group (the tournament judge scores it for the learner).
using judge_actor = caf::typed_actor<caf::reacts_to<finished_atom, group_result>>;

// Takes admitted groups and, in sync mode, (flush_atom) after a step's admissions; answers its
// stage usage.
using gatekeeper_actor = caf::typed_actor<
  caf::reacts_to<group_atom, group_start>,
  caf::reacts_to<flush_atom>,
  caf::replies_to<stats_atom>::with<stage_usage>>;

// A worker node (actors/node.hpp), local or behind CAF's middleman: (hello, the head's
// identity) answers the node's capacity or refuses a different build; compile, execute and
// generate jobs with ids chosen by the head, cancellable per kind; (weights, update) hands a
// policy version to its generator replicas and answers the version; statistics (the
// heartbeat); (drain) takes no new jobs and answers once the running ones have finished.
using node_actor = caf::typed_actor<
  caf::replies_to<hello_atom, build_identity>::with<node_info>,
  caf::replies_to<compile_atom, compile_request>::with<compile_reply>,
  caf::replies_to<exec_atom, exec_request>::with<node_exec_reply>,
  caf::reacts_to<cancel_atom, compile_atom, std::uint64_t>,
  caf::reacts_to<cancel_atom, exec_atom, std::uint64_t>,
  caf::replies_to<generate_atom, generate_request>::with<generate_reply>,
  caf::reacts_to<cancel_atom, generate_atom, std::uint64_t>,
  caf::replies_to<weights_atom, weights_update>::with<std::int64_t>,
  caf::replies_to<stats_atom>::with<node_stats>,
  caf::replies_to<drain_atom>::with<std::uint64_t>>;

// The head's registration and status actor, published on cluster.listen: (join, "HOST:PORT")
// is a node asking to be used (the head then connects to it like a listed one; asking again is
// harmless); (stats) answers every node's status (`leap cluster status`).
using head_actor = caf::typed_actor<
  caf::replies_to<join_atom, std::string>::with<std::string>,
  caf::replies_to<stats_atom>::with<cluster_status>>;

// The environment service behind `leap serve` (actors/env_service.hpp): checks one candidate;
// opens a LEAP group with G turn-1 submissions (answered once every turn-1 verdict is in);
// takes a later turn of one attempt (answered once that turn is judged; a repeat of a turn
// already sent answers the first one's outcome); answers a group's view; answers its gauges;
// (tick) is its own timer, which expires idle groups.
using env_service_actor = caf::typed_actor<
  caf::replies_to<check_atom, check_call>::with<check_answer>,
  caf::replies_to<group_atom, group_call>::with<group_answer>,
  caf::replies_to<turn_atom, turn_call>::with<group_answer>,
  caf::replies_to<view_atom, std::string>::with<group_answer>,
  caf::replies_to<stats_atom>::with<service_stats>,
  caf::reacts_to<tick_atom>>;

} // namespace leap::msg
