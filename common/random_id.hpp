// Names nobody can guess: 128 bits from std::random_device as 32 lowercase hex digits, for the
// ids one client must not be able to derive from another's (the environment service's groups,
// `leap serve`'s OpenEnv episodes). Any thread.
#pragma once

#include <string>

namespace leap {

std::string random_id();

} // namespace leap
