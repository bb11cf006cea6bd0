// Messages of the verification environment: compile and execute requests and replies, the
// verdict, pool statistics; their CAF inspect() overloads. Plain structs; any actor may send
// them, and every one is serialisable (binary, so they can cross processes). Include this header
// only where CAF is used (messages/, actors/, runtime/pipeline/, bench/, tests/).
#pragma once

#include "env/backend.hpp"
#include "env/compiler.hpp"
#include "env/verdict.hpp"
#include "messages/enum_inspect.hpp"
#include "messages/float_inspect.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace leap::env {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, verdict& x) {
  return f(caf::meta::type_name("leap_verdict"), x.task, msg::enum_field(x.backend), msg::enum_field(x.st),
           x.reason,
           msg::float_field(x.max_abs_error), msg::float_field(x.max_rel_error), x.mismatch_index, x.mismatch_output,
           x.mismatch_size_set, msg::float_field(x.expected), msg::float_field(x.actual), x.mismatches, x.trials_run,
           x.trials_passed, x.diagnostics, x.timed, msg::float_field(x.candidate_ms), msg::float_field(x.reference_ms), msg::float_field(x.speedup),
           msg::float_field(x.compile_seconds), msg::float_field(x.compile_stages), msg::float_field(x.run_seconds), x.cached, x.emulation_unsupported, x.flags, x.feedback);
}

} // namespace leap::env

namespace leap::msg {

// Build one candidate (or a task's reference) for a backend.
struct compile_request {
  std::uint64_t id = 0;        // chosen by the requester; used to cancel
  std::string task;
  std::string source;
  env::backend backend = env::backend::cpu;
  bool reference = false;
  // Queue order in the pool: lower goes first, equal ones in arrival order. The training
  // pipeline passes the group id, so the jobs of an older group (the batch the learner waits
  // for) go before a newer group's; 0 (references, checks) goes before all of them.
  std::uint64_t priority = 0;
};

// A finished build. `internal_error` never reaches a requester: the pool retries such a job
// (compiler.retries) and then fails the request with an error.
struct compile_reply {
  std::uint64_t id = 0;
  env::build_status status = env::build_status::internal_error;
  std::string diagnostics;
  std::string stage;           // which step failed: guards, nvcc, rewrite, g++, link
  double seconds = 0;
  std::vector<double> stages;  // wall seconds per env::compile_stage; empty on a cache hit
  bool cached = false;
  std::string key;             // the build's content address: an executor pool finds the
                               // build by it (in its own cache; no path crosses processes)
  std::int32_t attempts = 1;   // tries the pool needed (> 1 after infrastructure failures)
};

// Run a built candidate against its task's reference.
struct exec_request {
  std::uint64_t id = 0;
  std::string task;
  env::backend backend = env::backend::cpu;
  std::string candidate_build; // the content addresses (compile_reply::key) of the builds
  std::string reference_build;
  bool dump_inputs = false;
  std::uint64_t priority = 0;  // as compile_request::priority
};

struct exec_reply {
  std::uint64_t id = 0;
  env::verdict v;
  std::string kept_dir;
  std::uint64_t seed = 0;
  std::int32_t attempts = 1;   // tries the pool needed
};

struct pool_stats {
  std::string pool;
  std::uint32_t workers = 0;
  std::uint32_t busy = 0;
  std::uint32_t queued = 0;
  std::uint64_t completed = 0;
  std::uint64_t cache_hits = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t worker_restarts = 0;
  std::uint64_t retried = 0;   // tries repeated after an infrastructure failure
  std::uint64_t failed = 0;    // jobs that failed on every try
  std::uint64_t emulation_unsupported = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compile_request& x) {
  return f(caf::meta::type_name("leap_compile_request"), x.id, x.task, x.source, enum_field(x.backend),
           x.reference, x.priority);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compile_reply& x) {
  return f(caf::meta::type_name("leap_compile_reply"), x.id, enum_field(x.status),
           x.diagnostics, x.stage, float_field(x.seconds), float_field(x.stages), x.cached, x.key, x.attempts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exec_request& x) {
  return f(caf::meta::type_name("leap_exec_request"), x.id, x.task, enum_field(x.backend),
           x.candidate_build, x.reference_build, x.dump_inputs, x.priority);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exec_reply& x) {
  return f(caf::meta::type_name("leap_exec_reply"), x.id, x.v, x.kept_dir, x.seed, x.attempts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pool_stats& x) {
  return f(caf::meta::type_name("leap_pool_stats"), x.pool, x.workers, x.busy, x.queued,
           x.completed, x.cache_hits, x.cancelled, x.worker_restarts, x.retried, x.failed,
           x.emulation_unsupported);
}

} // namespace leap::msg
