// The on-disk build cache: <cache_dir>/builds/<key>/ holds one build's record (result.json), its
// worker executable when it built, and manifest.json (size and SHA-256 of both, common/
// file_manifest). What it promises:
// - Atomic entries: an entry is assembled in a temporary directory and renamed into place, so a
//   reader never sees half of one; an entry that fails its manifest (torn by a crash, truncated
//   by a full disk, damaged on disk, or written by an older leap without a manifest) is removed
//   by the lookup that finds it and built again, never executed.
// - One builder per key across processes: a key's entry is looked up, built and published under
//   an exclusive flock on one of 256 lock files (builds/.locks/<first two hex digits>), so two
//   leap processes sharing a cache never build the same key at once; a lock file is never
//   removed (removing one would race a new holder).
// - A size bound with least-recently-used eviction: the LRU clock is the entry directory's
//   mtime, set on publish and touched on every hit. Eviction takes the entry's key lock and
//   never removes an entry used in the last `keep_recent_seconds`: a compiler hands a build to
//   an executor right after the hit or publish that touched it, so an entry about to run is a
//   recently touched one (if one is ever run later than that, its worker is missing and the
//   executor reports leap's own error, an infrastructure drop, never a verdict).
// - `clear` refuses while a leap process has the cache open (every process that builds holds a
//   shared flock on builds/.in-use for its lifetime).
// - The compiler keeps each task's glue object beside the builds (<cache_dir>/glue/, one small
//   checksummed object per task signature and toolchain, env/compiler.cpp): `scan` counts them,
//   `clear` removes them with the builds, `prune` leaves them (a few KiB each, outside the bound).
// Thread-safe: every method may be called from any thread; the locks are the kernel's, per open
// file description, so they also order threads of one process.
#pragma once

#include "common/result.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace leap::env {

struct build_cache_options {
  std::string cache_dir;                    // entries under <cache_dir>/builds/<key>/
  std::uint64_t max_bytes = 4096ull << 20;  // the bound; 0 = unbounded
  double keep_recent_seconds = 600;         // entries used this recently are never evicted
  bool hold_in_use = true;                  // hold builds/.in-use shared (a building process)
};

class build_cache {
public:
  explicit build_cache(build_cache_options o);
  ~build_cache();
  build_cache(const build_cache&) = delete;
  build_cache& operator=(const build_cache&) = delete;

  const build_cache_options& options() const { return opts_; }
  std::string builds_dir() const;
  std::string glue_dir() const; // <cache_dir>/glue (env/compiler.cpp writes it)
  std::string entry_dir(const std::string& key) const;
  // The lock file that guards `key` (for a waiter that blocks on it in a child process).
  std::string lock_file(const std::string& key) const;

  // An exclusive flock on a key's lock file, released when the object goes.
  class key_lock {
  public:
    key_lock(key_lock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    key_lock& operator=(key_lock&& o) noexcept;
    key_lock(const key_lock&) = delete;
    key_lock& operator=(const key_lock&) = delete;
    ~key_lock();

  private:
    friend class build_cache;
    explicit key_lock(int fd) : fd_(fd) {}
    int fd_ = -1;
  };
  // nullopt: another holder has it (this process or another); an error: no lock file.
  result<std::optional<key_lock>> try_lock(const std::string& key) const;
  result<key_lock> lock(const std::string& key) const; // blocks until held

  enum class found : std::uint8_t { miss, hit, damaged };
  struct lookup_result {
    found what = found::miss;
    nlohmann::json record;  // on a hit: status, diagnostics, stage, seconds
    std::string problem;    // when damaged: what was wrong (the entry is removed)
    bool no_manifest = false; // damaged only in having no manifest: most likely an older leap's
  };
  // Under the key's lock: a verified entry (touched: it is now the most recently used), a miss,
  // or a damaged entry that was removed.
  lookup_result lookup(const key_lock& held, const std::string& key);

  // Under the key's lock: the record (and the worker at `worker_path`, moved in, when not empty)
  // in a temporary directory with its manifest, renamed into place (replacing an entry of the
  // key still there); then eviction when the cache has grown past its bound.
  result<void> publish(const key_lock& held, const std::string& key, const nlohmann::json& record,
                       const std::string& worker_path);

  // Whether a verified, runnable build of `key` is here, for a node asked to execute it: under
  // the key's lock, a lookup (which touches it, and removes it when damaged); when another job
  // holds the lock (building or checking a key of that lock file), whether its worker exists.
  bool has_worker(const std::string& key);

  struct usage {
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
    std::size_t damaged = 0;   // failed verification (only counted when verifying)
    std::size_t leftovers = 0; // temporary directories of builds that never finished
    std::size_t glue_objects = 0; // <cache_dir>/glue/*.o
    std::uint64_t glue_bytes = 0; // everything in <cache_dir>/glue/ (objects and checksums)
  };
  // Walks the cache; `verify` also checks every entry's manifest (reads every byte).
  result<usage> scan(bool verify) const;

  struct prune_report {
    usage before, after;
    std::size_t evicted = 0, damaged_removed = 0, leftovers_removed = 0;
    std::size_t kept_recent = 0; // over the bound but used within keep_recent_seconds
    std::size_t kept_locked = 0; // over the bound but its key was locked (in use)
  };
  // Removes damaged entries and stale temporaries, then evicts least recently used entries
  // until the cache holds at most `target_bytes`. Serialised across processes (builds/.evict).
  result<prune_report> prune(std::uint64_t target_bytes);
  struct clear_report {
    std::size_t builds = 0;
    std::size_t glue_objects = 0;
  };
  // Removes every entry and every glue object; refused while another leap process holds the
  // cache open.
  result<clear_report> clear();

private:
  // verify: also remove entries that fail their manifest; wait: block on another pruner.
  result<prune_report> prune_impl(std::uint64_t target_bytes, bool verify, bool wait);
  void maybe_evict(std::uint64_t added);

  build_cache_options opts_;
  int in_use_fd_ = -1;
  std::mutex evict_mtx_;
  std::atomic<std::int64_t> approx_bytes_{-1}; // -1: not measured yet
};

} // namespace leap::env
