// The tiny policy the training and benchmark end-to-end tests share: its config overrides and a
// warm start made once by `leap pretrain`'s code into the test cache (test processes that run at
// the same time wait on a file lock; the first makes it). Test code only.
#pragma once

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "runtime/config/config.hpp"
#include "runtime/workflows/warm_start.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace leap::test {

inline const std::vector<std::string> tiny = {
  "environment.backend=cpu", "sft.tasks=[\"vector_add\", \"relu\"]",
  "train.tasks=[\"vector_add\", \"relu\"]", "policy.vocab_size=600", "policy.d_model=32",
  "policy.n_layers=1", "policy.n_heads=2", "policy.n_kv_heads=1", "policy.d_ff=64",
  // 150 SFT steps on each task's first solution alone (no alternatives, no repairs): this model
  // then writes that solution, with sampling noise, so its samples build and run (about 200
  // tokens; the completion budget leaves room).
  "sft.max_steps=150", "sft.batch_sequences=4", "sft.lr=1e-2", "sft.alt_solution_weight=0",
  "sft.repair_weight=0", "train.batch_groups=2", "train.group_size=2",
  "train.max_new_tokens=320", "train.checkpoint_every=1", "executor.timeout_seconds=10"};

// The warm start the tests share: made once by `leap pretrain`'s code, kept in the test cache.
inline std::string warm_start() {
  static std::string dir;
  if (!dir.empty())
    return dir;
  auto cfg = config::defaults();
  for (auto& s : tiny)
    EXPECT_TRUE(config::apply_override(cfg, s).ok()) << s;
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  // Named by the settings, so a change of them never reuses an old warm start.
  auto path = std::string(LEAP_TEST_CACHE_DIR) + "/train-e2e-warm-start-"
              + sha256_hex(join(tiny, "\n")).substr(0, 12);
  // CTest runs the two tests in parallel processes: one makes the warm start, the other waits.
  std::filesystem::create_directories(LEAP_TEST_CACHE_DIR);
  int lock = ::open((path + ".lock").c_str(), O_CREAT | O_RDWR, 0644);
  EXPECT_GE(lock, 0);
  ::flock(lock, LOCK_EX);
  if (!std::filesystem::exists(path + "/model.safetensors")) {
    auto svc = runtime::make_services(cfg);
    EXPECT_TRUE(svc.ok()) << svc.message();
    if (!svc)
      return "";
    auto p = runtime::pretrain(**svc, path, false);
    EXPECT_TRUE(p.ok()) << p.message();
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  dir = path;
  return dir;
}

} // namespace leap::test
