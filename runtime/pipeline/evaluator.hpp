// Evaluates candidates through the environment's actors (the checks of an environment service:
// the rollout driver over the compiler and executor pools, actors/env_service.hpp), for
// `leap check`, `leap tasks verify`, corpus labelling and tests, over the local pools or the
// cluster's nodes (runtime/pipeline/env_pools.hpp). Jobs that fail inside leap are
// retried by the pools (compiler.retries, executor.retries) before they become an error. Owns a CAF actor system with the two
// supervised pools; the header keeps CAF out of its includers. Call from one (non-actor) thread.
#pragma once

#include "common/passkey.hpp"
#include "common/result.hpp"
#include "env/verdict.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/env_messages.hpp"
#include "runtime/pipeline/services.hpp"

#include <memory>
#include <string>
#include <vector>

namespace leap::runtime {

struct check_item {
  std::string task;
  std::string source;      // ignored when `reference` is set
  bool reference = false;  // check the task's own reference
  bool dump_inputs = false;
};

struct check_outcome {
  env::verdict v;
  std::string kept_dir;    // with dump_inputs: inputs.bin and outputs.bin of the reference run
  unsigned long long seed = 0;
};

class evaluator {
public:
  // An error: the cluster's transport cannot be set up (cluster.* keys, TLS files).
  static result<std::unique_ptr<evaluator>> create(services& svc);
  ~evaluator();

  // All items go through the pools at once (bounded by their sizes); results in item order.
  // An error is leap's own failure (a broken reference, a tool that cannot start), not a verdict.
  std::vector<result<check_outcome>> evaluate(const std::vector<check_item>& items);

  msg::pool_stats compiler_stats();
  msg::pool_stats executor_stats();
  // With cluster.nodes: how each node did; an error when the pools are local.
  result<msg::cluster_status> cluster_status();

  struct impl;

  evaluator(passkey<evaluator>, std::unique_ptr<impl> i); // create() only

private:
  std::unique_ptr<impl> impl_;
};

} // namespace leap::runtime
