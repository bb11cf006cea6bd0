// Typed interfaces of the environment's actors. Requesters hold these handles; the pools are
// spawned by runtime/boot. A crash_atom message makes a worker throw (for supervision tests).
#pragma once

#include "messages/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

namespace leap::msg {

// A supervised pool of workers: jobs by request, cancel by job id, statistics, and
// (crash_atom, worker index) to inject a worker fault (supervision tests, `leap doctor`).
template <class Atom, class Request, class Reply>
using pool_actor = caf::typed_actor<
  typename caf::replies_to<Atom, Request>::template with<Reply>,
  caf::reacts_to<cancel_atom, std::uint64_t>,
  caf::replies_to<stats_atom>::with<pool_stats>,
  caf::reacts_to<crash_atom, std::uint32_t>>;

using compiler_pool_actor = pool_actor<compile_atom, compile_request, compile_reply>;
using executor_pool_actor = pool_actor<exec_atom, exec_request, exec_reply>;
using generator_pool_actor = pool_actor<generate_atom, generate_request, generate_reply>;

} // namespace leap::msg
