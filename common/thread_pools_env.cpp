#include "common/thread_pools_env.hpp"

#include <cstdlib>

namespace leap {

bool prefer_quiet_thread_pools() {
  bool changed = false;
  for (const auto& v : preferred_thread_pool_env)
    if (std::getenv(v.name) == nullptr && ::setenv(v.name, v.value, 1) == 0)
      changed = true;
  return changed;
}

} // namespace leap
