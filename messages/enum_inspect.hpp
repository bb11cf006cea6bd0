// CAF inspect() for every enum that travels in leap's messages: verdict and build status,
// backend, DCP decision, how an attempt ended, estimator, tie key, loss aggregation, train mode,
// batch order. Each is carried as one byte and checked on load (a value out of range is an
// error, never an invalid enum); printing uses the enum's own to_string. A message's inspect()
// passes an enum field as `enum_field(x.f)`. Included by the message headers only (it pulls in
// CAF's meta annotations).
#pragma once

#include "algo/advantages.hpp"
#include "algo/rollout.hpp"
#include "algo/tournament.hpp"
#include "env/backend.hpp"
#include "env/compiler.hpp"
#include "env/verdict.hpp"
#include "messages/modes.hpp"
#include "policy/model/aggregation.hpp"

#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>

#include <cstdint>
#include <type_traits>

namespace leap::msg::detail {

// An enum field as it travels: one byte, checked on load. CAF 0.17's data processor serialises a
// bare enum itself (and an inspect() on the enum would be ambiguous with that), so message
// structs hand their enum fields to inspect() through this wrapper (msg::enum_field below).
template <class E>
struct checked_enum {
  static_assert(std::is_enum<E>::value, "checked_enum wraps enums");
  E& value;
  const char* name; // the type's name on the wire and in diagnostics
  E last;           // the largest valid value
};

template <class Inspector, class E>
typename Inspector::result_type inspect(Inspector& f, checked_enum<E>& x) {
  auto v = static_cast<std::uint8_t>(x.value);
  auto load = caf::meta::load_callback([&]() -> caf::error {
    if (v > static_cast<std::uint8_t>(x.last))
      return caf::make_error(caf::sec::invalid_argument,
                             std::string("bad ") + x.name + " value " + std::to_string(v));
    x.value = static_cast<E>(v);
    return caf::none;
  });
  return f(caf::meta::type_name(x.name), v, load);
}

// Printed by name.
template <class E>
std::string to_string(const checked_enum<E>& x) {
  return to_string(x.value);
}

} // namespace leap::msg::detail

namespace leap::msg {

// The field wrapper of each enum that travels in leap's messages.
inline detail::checked_enum<env::status> enum_field(env::status& x) {
  return {x, "leap_status", env::status::rejected};
}
inline detail::checked_enum<env::build_status> enum_field(env::build_status& x) {
  return {x, "leap_build_status", env::build_status::internal_error};
}
inline detail::checked_enum<env::backend> enum_field(env::backend& x) {
  return {x, "leap_backend", env::backend::cuda};
}
inline detail::checked_enum<algo::group_decision> enum_field(algo::group_decision& x) {
  return {x, "leap_group_decision", algo::group_decision::no_verdicts};
}
inline detail::checked_enum<algo::attempt_end> enum_field(algo::attempt_end& x) {
  return {x, "leap_attempt_end", algo::attempt_end::unsupported};
}
inline detail::checked_enum<algo::estimator> enum_field(algo::estimator& x) {
  return {x, "leap_estimator", algo::estimator::discounted};
}
inline detail::checked_enum<algo::tie_key> enum_field(algo::tie_key& x) {
  return {x, "leap_tie_key", algo::tie_key::tokens};
}
inline detail::checked_enum<policy::loss_aggregation> enum_field(policy::loss_aggregation& x) {
  return {x, "leap_loss_aggregation", policy::loss_aggregation::dr_grpo};
}
inline detail::checked_enum<train_mode> enum_field(train_mode& x) {
  return {x, "leap_train_mode", train_mode::sync};
}
inline detail::checked_enum<batch_order> enum_field(batch_order& x) {
  return {x, "leap_batch_order", batch_order::finish};
}

} // namespace leap::msg
