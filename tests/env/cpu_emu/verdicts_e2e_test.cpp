// Emulation fidelity end to end: the kernels under tests/env/cpu_emu/candidates/<task>/*.cu go
// through the real pipeline (static guards, nvcc, the rewriter, g++ against the emulation,
// worker processes, comparison) and must get the verdict their header lines state:
//   // expect: <status>            (required)
//   // reason: <reason>            (optional, exact)
//   // flags: <flag>[,<flag>]      (optional, each must be in the verdict's flags)
//   // feedback: <text>            (optional, must occur in the feedback)
// Kernels without a `flags:` line must get no emulation flag (implicit_warp_sync,
// undefined_behaviour), so a flag cannot be raised on everything.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "runtime/workflows/verify_tasks.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

namespace {

struct candidate {
  std::string task, path, source;
  std::string expect, reason, feedback;
  std::vector<std::string> flags;
};

std::string header_value(const std::string& source, const std::string& key) {
  for (auto& line : split_lines(source)) {
    if (!starts_with(line, "//"))
      break;
    auto at = line.find("// " + key + ":");
    if (at == 0)
      return std::string(trim(line.substr(key.size() + 4)));
  }
  return "";
}

std::vector<candidate> candidates() {
  std::vector<candidate> out;
  for (auto& dir : fs::directory_iterator(std::string(LEAP_SOURCE_DIR) + "/tests/env/cpu_emu/candidates"))
    for (auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".cu")
        continue;
      candidate c;
      c.task = dir.path().filename().string();
      c.path = f.path().string();
      c.source = *read_file(c.path);
      c.expect = header_value(c.source, "expect");
      c.reason = header_value(c.source, "reason");
      c.feedback = header_value(c.source, "feedback");
      const std::string flags = header_value(c.source, "flags");
      for (std::size_t s = 0; s < flags.size();) {
        auto comma = flags.find(',', s);
        auto one = trim(std::string_view(flags).substr(s, comma == std::string::npos ? std::string::npos : comma - s));
        if (!one.empty())
          c.flags.emplace_back(one);
        s = comma == std::string::npos ? flags.size() : comma + 1;
      }
      out.push_back(c);
    }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return out;
}

bool has_flag(const std::string& flags, const std::string& f) {
  return ("," + flags + ",").find("," + f + ",") != std::string::npos;
}

} // namespace

TEST(EmuVerdicts, EveryFidelityKernelGetsItsExpectedVerdict) {
  auto cfg = config::defaults();
  ASSERT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 20;
  cfg.executor.trials = 2;
  cfg.executor.memory_limit_mb = 2048;
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto ev_made = evaluator::create(**svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  auto cands = candidates();
  ASSERT_GE(cands.size(), 7u);
  std::vector<check_item> items;
  for (auto& c : cands)
    items.push_back({c.task, c.source, false, false});
  auto out = ev.evaluate(items);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const auto& c = cands[i];
    ASSERT_TRUE(out[i].ok()) << c.path << ": " << out[i].message();
    const auto& v = out[i]->v;
    std::printf("[ verdict  ] %s/%s: %s (%s) flags '%s'\n", c.task.c_str(), fs::path(c.path).filename().c_str(),
                env::to_string(v.st), v.reason.c_str(), v.flags.c_str());
    ASSERT_FALSE(c.expect.empty()) << c.path << " has no '// expect:' line";
    EXPECT_EQ(env::to_string(v.st), c.expect) << c.path << "\n  reason: " << v.reason << "\n  feedback: " << v.feedback;
    if (!c.reason.empty()) {
      EXPECT_EQ(v.reason, c.reason) << c.path << "\n  feedback: " << v.feedback;
    }
    for (auto& f : c.flags)
      EXPECT_TRUE(has_flag(v.flags, f)) << c.path << ": flags '" << v.flags << "' lack " << f;
    if (c.flags.empty()) {
      EXPECT_FALSE(has_flag(v.flags, "implicit_warp_sync")) << c.path << ": " << v.flags;
      EXPECT_FALSE(has_flag(v.flags, "undefined_behaviour")) << c.path << ": " << v.flags;
    }
    if (!c.feedback.empty()) {
      EXPECT_NE(v.feedback.find(c.feedback), std::string::npos) << c.path << "\n  feedback: " << v.feedback;
    }
  }
}

// A task whose reference computes in half (half_task/tasks/hf_fma_half: __hfma2 on half2
// pairs) passes `leap tasks verify` on the emulation against its float64 LibTorch oracle, and
// candidates of it get their verdicts: float32 is within the half tolerance, two half roundings
// (__hmul2 then __hadd2) are too, bfloat16's coarser rounding is a wrong answer.
TEST(EmuVerdicts, HalfTaskVerifiesAndJudgesCandidates) {
  const std::string dir = std::string(LEAP_SOURCE_DIR) + "/tests/env/cpu_emu/half_task";
  auto cfg = config::defaults();
  ASSERT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  cfg.environment.tasks_dir = dir + "/tasks";
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 20;
  cfg.executor.trials = 2;
  cfg.executor.memory_limit_mb = 2048;
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto ev = evaluator::create(**svc);
  ASSERT_TRUE(ev) << ev.message();
  auto rows = verify_tasks(**svc, **ev, {"hf_fma_half"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].ok) << rows[0].problem;
  EXPECT_GT(rows[0].max_abs_vs_oracle, 0.0) << "the half reference cannot equal float64 everywhere";
  EXPECT_LT(rows[0].max_abs_vs_oracle, 2e-3);
  std::vector<std::pair<std::string, std::string>> cands;  // file, expected status
  for (auto& f : fs::directory_iterator(dir + "/candidates")) {
    auto source = *read_file(f.path().string());
    cands.push_back({f.path().filename().string(), header_value(source, "expect")});
  }
  std::sort(cands.begin(), cands.end());
  ASSERT_EQ(cands.size(), 3u);
  std::vector<check_item> items;
  for (auto& [file, expect] : cands)
    items.push_back({"hf_fma_half", *read_file(dir + "/candidates/" + file), false, false});
  auto out = (*ev)->evaluate(items);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    ASSERT_TRUE(out[i].ok()) << cands[i].first << ": " << out[i].message();
    std::printf("[ verdict  ] hf_fma_half/%s: %s (%s)\n", cands[i].first.c_str(), env::to_string(out[i]->v.st),
                out[i]->v.reason.c_str());
    EXPECT_EQ(env::to_string(out[i]->v.st), cands[i].second) << cands[i].first << ": " << out[i]->v.feedback;
  }
}
