// Torch-free checks of a checkpoint directory's files against its manifest.json (see
// checkpoint.hpp for the layout), for the loaders in checkpoint.cpp and for commands that read a
// checkpoint's JSON files themselves. Free functions; thread-safe.
#include "policy/model/checkpoint_verify.hpp"

#include "common/file_manifest.hpp"
#include "common/fs.hpp"
#include "common/sha256.hpp"

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>

namespace leap::policy {

namespace fs = std::filesystem;

namespace {

// Files this process has verified, by path, size and modification times of the file and its
// manifest: the several loaders of one checkpoint (tokenizer, model, optimizer, each generator
// replica) hash each file once, and a file rewritten since is hashed again.
std::string verified_key(const std::string& dir, const std::string& name) {
  std::error_code ec;
  auto path = fs::absolute(dir + "/" + name, ec).lexically_normal();
  auto size = fs::file_size(path, ec);
  auto t = fs::last_write_time(path, ec).time_since_epoch().count();
  auto tm = fs::last_write_time(dir + "/manifest.json", ec).time_since_epoch().count();
  return path.string() + "|" + std::to_string(size) + "|" + std::to_string(t) + "|"
         + std::to_string(tm);
}

std::mutex memo_mtx;
std::set<std::string> verified_files, warned_dirs;

// Records files just checked against their manifest, so the loaders do not hash them again.
void remember_verified(const std::string& dir, const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lk(memo_mtx);
  for (const auto& n : names)
    verified_files.insert(verified_key(dir, n));
}

} // namespace

const std::vector<std::string>& checkpoint_files() {
  static const std::vector<std::string> files{"config.json", "model.safetensors", "tokenizer.json",
                                              "optimizer.safetensors", "trainer_state.json"};
  return files;
}

result<void> verify_checkpoint(const std::string& dir, const std::vector<std::string>& which) {
  const auto& names = which.empty() ? checkpoint_files() : which;
  std::vector<std::string> unverified;
  std::error_code ec;
  for (const auto& n : names)
    if (fs::exists(dir + "/" + n, ec)) {
      std::lock_guard<std::mutex> lk(memo_mtx);
      if (!verified_files.count(verified_key(dir, n)))
        unverified.push_back(n);
    }
  if (unverified.empty())
    return {};
  auto v = verify_manifest(dir, unverified);
  if (!v)
    return make_error("checkpoint " + dir + " is damaged: " + v.message()
                      + "; restore it from a copy or start from another checkpoint");
  if (*v == manifest_state::verified)
    remember_verified(dir, unverified);
  if (*v == manifest_state::no_manifest) {
    std::lock_guard<std::mutex> lk(memo_mtx);
    if (warned_dirs.insert(fs::absolute(dir, ec).lexically_normal().string()).second)
      std::fprintf(stderr, "leap: warning: checkpoint %s has no manifest.json (saved before leap "
                           "checksummed checkpoints, by hand, or not by leap, e.g. a Hugging Face "
                           "model directory): loading it unverified\n",
                   dir.c_str());
  }
  return {};
}

result<void> verify_pinned_checkpoint(const std::string& dir, const std::string& pinned_sha256) {
  const std::string manifest = dir + "/manifest.json";
  auto text = read_file(manifest);
  if (!text)
    return make_error("checkpoint " + dir + " is pinned (SHA-256 " + pinned_sha256
                      + ") but its manifest.json cannot be read: " + text.message());
  const std::string got = sha256_hex(*text);
  if (got != pinned_sha256)
    return make_error("checkpoint " + dir + " is not the pinned one: its manifest.json has SHA-256 "
                      + got + ", the configuration pins " + pinned_sha256
                      + "; restore the shipped files (git checkout), or, for a warm start you "
                        "rebuilt on purpose (make warm-start), set the pin to the new hash");
  auto v = verify_manifest(dir);  // every file it lists
  if (!v)
    return make_error("checkpoint " + dir + " is damaged: " + v.message()
                      + "; restore the shipped files (git checkout)");
  std::vector<std::string> present;  // every file was just hashed: the loaders need not again
  std::error_code ec;
  for (const auto& n : checkpoint_files())
    if (fs::exists(dir + "/" + n, ec))
      present.push_back(n);
  remember_verified(dir, present);
  return {};
}

result<std::string> checkpoint_tokenizer_path(const std::string& dir) {
  std::string p = dir + "/tokenizer.json";
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return make_error(dir + ": checkpoint has no tokenizer.json");
  if (auto v = verify_checkpoint(dir, {"tokenizer.json"}); !v) return v.err();
  return p;
}

result<void> promote_checkpoint(const std::string& staged, const std::string& dir) {
  std::error_code ec;
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // An existing checkpoint is moved aside first and removed afterwards.
  fs::path old;
  if (fs::exists(target, ec)) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".old.%016llx", os_random_u64());
    old = parent / ("." + target.filename().string() + suffix);
    fs::rename(target, old, ec);
    if (ec) return make_error("cannot move the existing checkpoint " + target.string() + " aside: " + ec.message());
  }
  fs::rename(staged, target, ec);
  if (ec) {
    std::error_code ignore;
    if (!old.empty()) fs::rename(old, target, ignore);
    return make_error("cannot rename " + staged + " to " + target.string() + ": " + ec.message());
  }
  if (!old.empty()) fs::remove_all(old, ec);
  return {};
}

} // namespace leap::policy
