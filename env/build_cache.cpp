#include "env/build_cache.hpp"

#include "common/file_manifest.hpp"
#include "common/fs.hpp"
#include "common/json_text.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace fs = std::filesystem;

namespace leap::env {

namespace {

// Closes a lock file's descriptor (releasing its flock) at the end of a scope.
struct fd_closer {
  int fd;
  ~fd_closer() { ::close(fd); }
};

// Entry directories are named by their key: lower-case hex, nothing else.
bool is_key_name(const std::string& n) {
  return n.size() >= 8 && std::all_of(n.begin(), n.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool is_leftover_name(const std::string& n) {
  return n.find(".tmp-") != std::string::npos || n.rfind(".trash-", 0) == 0;
}

double age_seconds(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec)
    return 0;
  return std::chrono::duration<double>(fs::file_time_type::clock::now() - t).count();
}

std::uint64_t dir_bytes(const fs::path& dir) {
  std::uint64_t n = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code ec2;
    if (e.is_regular_file(ec2))
      n += e.file_size(ec2);
  }
  return n;
}

// Out of the way first (one rename: no reader can find a half-removed entry), then removed.
void remove_entry(const fs::path& dir) {
  std::error_code ec;
  auto trash = dir.parent_path() / (".trash-" + std::to_string(os_random_u64()));
  fs::rename(dir, trash, ec);
  fs::remove_all(ec ? dir : trash, ec);
}

int open_lock_file(const std::string& path) {
  return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

struct entry_info {
  std::string key;
  fs::path dir;
  double age = 0;
  std::uint64_t bytes = 0;
};

} // namespace

build_cache::key_lock& build_cache::key_lock::operator=(key_lock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

build_cache::key_lock::~key_lock() {
  if (fd_ >= 0)
    ::close(fd_);
}

build_cache::build_cache(build_cache_options o) : opts_(std::move(o)) {
  std::error_code ec;
  fs::create_directories(builds_dir() + "/.locks", ec);
  if (opts_.hold_in_use) {
    in_use_fd_ = open_lock_file(builds_dir() + "/.in-use");
    if (in_use_fd_ >= 0)
      (void)::flock(in_use_fd_, LOCK_SH);
  }
}

build_cache::~build_cache() {
  if (in_use_fd_ >= 0)
    ::close(in_use_fd_);
}

std::string build_cache::builds_dir() const { return opts_.cache_dir + "/builds"; }
std::string build_cache::glue_dir() const { return opts_.cache_dir + "/glue"; }

std::string build_cache::entry_dir(const std::string& key) const { return builds_dir() + "/" + key; }

std::string build_cache::lock_file(const std::string& key) const {
  return builds_dir() + "/.locks/" + (key.size() >= 2 ? key.substr(0, 2) : key) + ".lock";
}

result<std::optional<build_cache::key_lock>> build_cache::try_lock(const std::string& key) const {
  auto path = lock_file(key);
  int fd = open_lock_file(path);
  if (fd < 0)
    return make_error(path + ": cannot open the build cache's lock: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return std::optional<key_lock>();
    return make_error(path + ": cannot lock: " + std::strerror(err));
  }
  return std::optional<key_lock>(key_lock(fd));
}

result<build_cache::key_lock> build_cache::lock(const std::string& key) const {
  auto path = lock_file(key);
  int fd = open_lock_file(path);
  if (fd < 0)
    return make_error(path + ": cannot open the build cache's lock: " + std::strerror(errno));
  int rc;
  do
    rc = ::flock(fd, LOCK_EX);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    ::close(fd);
    return make_error(path + ": cannot lock: " + std::strerror(err));
  }
  return key_lock(fd);
}

build_cache::lookup_result build_cache::lookup(const key_lock&, const std::string& key) {
  lookup_result r;
  const auto dir = entry_dir(key);
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return r;
  auto damaged = [&](std::string why) {
    remove_entry(dir);
    r.what = found::damaged;
    r.problem = std::move(why);
    return r;
  };
  auto v = verify_manifest(dir, {"result.json"});
  if (!v)
    return damaged(v.message());
  if (*v == manifest_state::no_manifest) {
    r.no_manifest = true;
    return damaged(dir + ": no manifest.json (torn, or written by a leap that did not checksum "
                         "its builds)");
  }
  auto text = read_file(dir + "/result.json");
  if (!text)
    return damaged(text.message());
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("status") || !j["status"].is_string())
    return damaged(dir + "/result.json: not a build record");
  if (j["status"] == "ok") {
    auto w = verify_manifest(dir, {"worker"});
    if (!w)
      return damaged(w.message());
  }
  fs::last_write_time(dir, fs::file_time_type::clock::now(), ec); // the LRU clock
  r.what = found::hit;
  r.record = std::move(j);
  return r;
}

result<void> build_cache::publish(const key_lock&, const std::string& key,
                                  const nlohmann::json& record, const std::string& worker_path) {
  auto tmp = make_temp_dir(builds_dir(), key.substr(0, 16) + ".tmp-");
  if (!tmp)
    return tmp.err();
  auto fail = [&](std::string why) {
    std::error_code ec;
    fs::remove_all(*tmp, ec);
    return make_error("build cache: " + why);
  };
  std::vector<std::string> names{"result.json"};
  std::error_code ec;
  if (!worker_path.empty()) {
    fs::rename(worker_path, *tmp + "/worker", ec);
    if (ec) { // another filesystem (work_dir elsewhere): copy
      ec.clear();
      fs::copy_file(worker_path, *tmp + "/worker", ec);
      if (ec)
        return fail("cannot move the worker " + worker_path + " into " + *tmp + ": " + ec.message());
    }
    names.push_back("worker");
  }
  if (auto w = write_file_atomic(*tmp + "/result.json", dump_lossy(record) + "\n"); !w)
    return fail(w.message());
  if (auto m = write_manifest(*tmp, names); !m)
    return fail(m.message());
  const auto final_dir = entry_dir(key);
  // Under the key's lock an entry still there is one the caller chose to replace (its record
  // named no known status, say): ours takes its place.
  if (fs::exists(final_dir, ec))
    remove_entry(final_dir);
  fs::rename(*tmp, final_dir, ec);
  if (ec)
    return fail("cannot rename " + *tmp + " to " + final_dir + ": " + ec.message());
  maybe_evict(dir_bytes(final_dir));
  return {};
}

bool build_cache::has_worker(const std::string& key) {
  auto held = try_lock(key);
  std::error_code ec;
  if (!held || !*held)
    return fs::exists(entry_dir(key) + "/worker", ec);
  auto r = lookup(**held, key);
  if (r.what == found::damaged)
    std::fprintf(stderr, "leap: build cache: %s; removed (it will be built again)\n",
                 r.problem.c_str());
  return r.what == found::hit && r.record.value("status", "") == "ok";
}

result<build_cache::usage> build_cache::scan(bool verify) const {
  usage u;
  std::error_code ec;
  fs::directory_iterator it(builds_dir(), ec);
  if (ec)
    return make_error(builds_dir() + ": cannot list: " + ec.message());
  for (auto& e : it) {
    auto name = e.path().filename().string();
    std::error_code ec2;
    if (!e.is_directory(ec2))
      continue;
    if (is_leftover_name(name)) {
      ++u.leftovers;
      continue;
    }
    if (!is_key_name(name))
      continue;
    ++u.entries;
    u.bytes += dir_bytes(e.path());
    if (verify) {
      auto v = verify_manifest(e.path().string());
      if (!v || *v == manifest_state::no_manifest)
        ++u.damaged;
    }
  }
  std::error_code gec;
  for (auto& e : fs::directory_iterator(glue_dir(), gec)) { // absent until the first build
    std::error_code ec2;
    if (!e.is_regular_file(ec2))
      continue;
    if (e.path().extension() == ".o")
      ++u.glue_objects;
    auto n = e.file_size(ec2);
    if (!ec2)
      u.glue_bytes += n;
  }
  return u;
}

result<build_cache::prune_report> build_cache::prune(std::uint64_t target_bytes) {
  return prune_impl(target_bytes, true, true);
}

result<build_cache::prune_report> build_cache::prune_impl(std::uint64_t target_bytes, bool verify,
                                                          bool wait) {
  prune_report rep;
  // One pruner at a time across processes.
  const auto evict_path = builds_dir() + "/.locks/evict.lock";
  int fd = open_lock_file(evict_path);
  if (fd < 0)
    return make_error(evict_path + ": cannot open: " + std::strerror(errno));
  fd_closer close_fd{fd};
  if (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0)
    return make_error(evict_path + ": another process is pruning this cache");

  auto before = scan(false);
  if (!before)
    return before.err();
  rep.before = *before;
  std::vector<entry_info> entries;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(builds_dir(), ec)) {
    auto name = e.path().filename().string();
    std::error_code ec2;
    if (!e.is_directory(ec2))
      continue;
    const double min_leftover_age = std::max(60.0, opts_.keep_recent_seconds);
    if (is_leftover_name(name)) {
      if (age_seconds(e.path()) > min_leftover_age) {
        fs::remove_all(e.path(), ec2);
        ++rep.leftovers_removed;
      }
      continue;
    }
    if (!is_key_name(name))
      continue;
    if (verify) {
      auto v = verify_manifest(e.path().string());
      if (!v || *v == manifest_state::no_manifest) {
        auto held = try_lock(name);
        if (held && *held) {
          remove_entry(e.path());
          ++rep.damaged_removed;
          continue;
        }
      }
    }
    entries.push_back({name, e.path(), age_seconds(e.path()), dir_bytes(e.path())});
  }
  std::uint64_t total = 0;
  for (auto& e : entries)
    total += e.bytes;
  // Least recently used first.
  std::sort(entries.begin(), entries.end(),
            [](const entry_info& a, const entry_info& b) { return a.age > b.age; });
  for (auto& e : entries) {
    if (total <= target_bytes)
      break;
    if (e.age < opts_.keep_recent_seconds) {
      ++rep.kept_recent;
      continue;
    }
    auto held = try_lock(e.key);
    if (!held || !*held) {
      ++rep.kept_locked;
      continue;
    }
    // Touched by a hit since it was listed: used now, keep it.
    if (age_seconds(e.dir) < opts_.keep_recent_seconds) {
      ++rep.kept_recent;
      continue;
    }
    remove_entry(e.dir);
    total -= e.bytes;
    ++rep.evicted;
  }
  auto after = scan(false);
  if (!after)
    return after.err();
  rep.after = *after;
  return rep;
}

void build_cache::maybe_evict(std::uint64_t added) {
  if (opts_.max_bytes == 0)
    return;
  std::lock_guard<std::mutex> lk(evict_mtx_);
  if (approx_bytes_ < 0) {
    auto u = scan(false);
    if (!u)
      return;
    approx_bytes_ = static_cast<std::int64_t>(u->bytes);
  } else {
    approx_bytes_ += static_cast<std::int64_t>(added);
  }
  if (static_cast<std::uint64_t>(approx_bytes_.load()) <= opts_.max_bytes)
    return;
  // Down to 90% of the bound, so the next eviction is some builds away.
  auto rep = prune_impl(opts_.max_bytes / 10 * 9, false, false);
  if (rep)
    approx_bytes_ = static_cast<std::int64_t>(rep->after.bytes);
}

result<build_cache::clear_report> build_cache::clear() {
  const auto path = builds_dir() + "/.in-use";
  int fd = open_lock_file(path);
  if (fd < 0)
    return make_error(path + ": cannot open: " + std::strerror(errno));
  fd_closer close_fd{fd};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
    return make_error(opts_.cache_dir + " is in use by a running leap process: stop it first, or "
                      "use 'leap cache prune' (which keeps what is in use)");
  clear_report rep;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (auto& e : fs::directory_iterator(builds_dir(), ec)) {
    auto name = e.path().filename().string();
    std::error_code ec2;
    if (e.is_directory(ec2) && (is_key_name(name) || is_leftover_name(name)))
      dirs.push_back(e.path());
  }
  for (auto& d : dirs) {
    auto name = d.filename().string();
    if (is_key_name(name)) {
      auto held = lock(name);
      if (!held)
        return held.err();
      remove_entry(d);
      ++rep.builds;
    } else {
      fs::remove_all(d, ec);
    }
  }
  // No process builds while we hold builds/.in-use exclusively, so no glue object is being
  // written; a file that will not go is an error (the cache would not be clear).
  std::error_code gec;
  std::vector<fs::path> glue;
  for (auto& e : fs::directory_iterator(glue_dir(), gec))
    glue.push_back(e.path());
  for (auto& f : glue) {
    std::error_code ec2;
    const bool object = f.extension() == ".o";
    fs::remove_all(f, ec2);
    if (ec2)
      return make_error(f.string() + ": cannot remove: " + ec2.message());
    if (object)
      ++rep.glue_objects;
  }
  approx_bytes_ = -1;
  return rep;
}

} // namespace leap::env
