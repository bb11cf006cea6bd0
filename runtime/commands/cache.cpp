// `leap cache stats|prune|clear`: the build cache (<cache_dir>/builds, env/build_cache.hpp):
// its size against environment.cache_max_mb and its health, and the glue objects beside it;
// least-recently-used eviction down to the bound; removing every build and glue object. Needs
// only the configuration (no tools, no tasks).
#include "env/build_cache.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdio>

namespace leap::runtime {

namespace {

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

std::string bound_text(std::uint64_t max_bytes) {
  if (max_bytes == 0)
    return "unbounded";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", mib(max_bytes));
  return buf;
}

int run_cache(const command_context& ctx) {
  const auto& w = ctx.args.words;
  auto sub = w.size() > ctx.word_count ? w[ctx.word_count] : std::string();
  if (w.size() > ctx.word_count + 1)
    return usage_error("cache: unexpected argument '" + w[ctx.word_count + 1] + "'");
  const auto& env = ctx.cfg->environment;
  env::build_cache_options o;
  o.cache_dir = env.cache_dir.empty() ? default_cache_dir() : env.cache_dir;
  o.max_bytes = static_cast<std::uint64_t>(env.cache_max_mb) << 20;
  o.hold_in_use = false;
  env::build_cache cache(o);
  if (sub == "stats") {
    auto u = cache.scan(true);
    if (!u) {
      std::fprintf(stderr, "leap cache: %s\n", u.message().c_str());
      return exit_failed;
    }
    std::printf("build cache:  %s\n", cache.builds_dir().c_str());
    std::printf("entries:      %zu\n", u->entries);
    std::printf("size:         %.1f MiB (bound %s)\n", mib(u->bytes), bound_text(o.max_bytes).c_str());
    std::printf("damaged:      %zu (removed and rebuilt when next used, or by 'leap cache prune')\n",
                u->damaged);
    std::printf("unfinished:   %zu temporary directories\n", u->leftovers);
    std::printf("glue objects: %zu, %.1f KiB in %s (one per task signature; removed by 'clear')\n",
                u->glue_objects, static_cast<double>(u->glue_bytes) / 1024.0,
                cache.glue_dir().c_str());
    return exit_ok;
  }
  if (sub == "prune") {
    auto r = cache.prune(o.max_bytes == 0 ? ~std::uint64_t(0) : o.max_bytes);
    if (!r) {
      std::fprintf(stderr, "leap cache: %s\n", r.message().c_str());
      return exit_failed;
    }
    std::printf("before:  %zu entries, %.1f MiB (bound %s)\n", r->before.entries, mib(r->before.bytes),
                bound_text(o.max_bytes).c_str());
    std::printf("removed: %zu least recently used, %zu damaged, %zu unfinished temporaries\n",
                r->evicted, r->damaged_removed, r->leftovers_removed);
    if (r->kept_recent || r->kept_locked)
      std::printf("kept:    %zu used in the last %.0f s, %zu in use (over the bound)\n", r->kept_recent,
                  o.keep_recent_seconds, r->kept_locked);
    std::printf("after:   %zu entries, %.1f MiB\n", r->after.entries, mib(r->after.bytes));
    return exit_ok;
  }
  if (sub == "clear") {
    auto n = cache.clear();
    if (!n) {
      std::fprintf(stderr, "leap cache: %s\n", n.message().c_str());
      return exit_failed;
    }
    std::printf("removed %zu builds from %s and %zu glue objects from %s\n", n->builds,
                cache.builds_dir().c_str(), n->glue_objects, cache.glue_dir().c_str());
    return exit_ok;
  }
  return usage_error("cache needs 'stats', 'prune' or 'clear'");
}

} // namespace

command cache_command() {
  return {{"cache"}, "stats|prune|clear",
          "the build cache: size, bound and health; evict the least\nrecently used builds down to "
          "environment.cache_max_mb;\nor remove every build and glue object (refused while a leap uses it)",
          command::needs::config, false, true, run_cache};
}

} // namespace leap::runtime
