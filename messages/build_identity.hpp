// Who a process is on the wire: leap's version and a hash over every message type of the
// type-id block (its registered name, and the type of each field its inspect() visits, in order,
// recursively). A head and a node exchange it when they connect and refuse each other when it
// differs, with a message naming both versions. CAF 0.17's inspect() carries no field names, so
// a field renamed without changing its type or position keeps the hash; anything that changes
// the bytes on the wire changes it. Pure functions; any thread.
#pragma once

#include "messages/enum_inspect.hpp"

#include <caf/meta/type_name.hpp>

#include <optional>
#include <string>

namespace leap::msg {

struct build_identity {
  std::string version;  // leap's version (`leap version`)
  std::string messages; // 16 hex digits: FNV-1a 64 over message_signature()
};

// This binary's identity.
build_identity this_build_identity();

// The text hashed: one line per registered type, "<id> <name> <field types>".
std::string message_signature();

// An error text when `theirs` cannot talk to `ours`, naming both versions; none when equal.
std::optional<std::string> identity_mismatch(const build_identity& ours,
                                             const build_identity& theirs);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, build_identity& x) {
  return f(caf::meta::type_name("leap_build_identity"), x.version, x.messages);
}

} // namespace leap::msg
