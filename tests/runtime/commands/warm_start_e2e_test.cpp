// The shipped warm start's recipe at tiny scale: scripts/make-warm-start.sh (what `make
// warm-start` runs) trains the stages of configs/warm-start/ in order through `leap pretrain`,
// each from the one before, replaces the target directory with the last and renews the pin in a
// copy of configs/quickstart.toml; a rerun keeps the stages already made. `leap train` then
// refuses the warm start under another pin, and a pinned warm start whose weights changed. Real
// leap processes, CPU emulation.
#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "env/process.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "runtime/config/config.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>

namespace fs = std::filesystem;
using namespace leap;

namespace {

using leap::test::temp_dir;

// The tiny model and corpus (two bundled tasks, two generated ones of each stage's families, a
// paraphrase, a written form and a notation form of the first; no bug variants, no self-repair)
// in place of the 1.6M-parameter model on thousands of tasks.
const std::vector<std::string> tiny = {
  "environment.backend=cpu", "environment.cache_dir=" LEAP_TEST_CACHE_DIR,
  "sft.tasks=[\"vector_add\", \"relu\"]", "sft.generated_tasks=2", "sft.generated_paraphrases=1",
  "sft.generated_written=1", "sft.generated_notation=1",
  "sft.bugs_per_kind=0",
  "policy.vocab_size=400", "policy.d_model=32", "policy.n_layers=1", "policy.n_heads=2",
  "policy.n_kv_heads=1", "policy.d_ff=64", "sft.max_steps=4", "sft.self_repair_steps=0",
  "sft.batch_sequences=2",
  // Stage 2 starts at the 10,000th elementwise task; drawing that far takes 15 s, so here it
  // starts at the first.
  "sft.generated_first=0"};

env::process_outcome run(std::vector<std::string> argv, const std::string& cwd) {
  env::process_spec s;
  s.argv = std::move(argv);
  s.cwd = cwd;
  // The script runs the leap this test was built with (its default, build/leap in the source
  // tree, does not exist in a build directory elsewhere).
  s.env = {std::string("LEAP=") + LEAP_BINARY};
  s.timeout_seconds = 600;
  s.output_limit = 1 << 20;
  return env::run_blocking(std::move(s));
}

std::string pin_in(const std::string& toml) {
  std::smatch m;
  auto text = *read_file(toml);
  static const std::regex line("\nwarm_start_sha256 = \"([0-9a-f]*)\"");
  return std::regex_search(text, m, line) ? m[1].str() : "";
}

} // namespace

TEST(WarmStartRecipe, TinyScaleBuildsAPinnedWarmStartThatTrainChecks) {
  temp_dir t;
  const std::string ws = t.path + "/warm_start", toml = t.path + "/quickstart.toml";
  fs::copy_file(LEAP_SOURCE_DIR "/configs/quickstart.toml", toml);
  const std::string old_pin = pin_in(toml);
  ASSERT_EQ(old_pin.size(), 64u) << "configs/quickstart.toml pins the shipped warm start";

  const std::string work = t.path + "/stages";
  std::vector<std::string> argv = {"/bin/bash", LEAP_SOURCE_DIR "/scripts/make-warm-start.sh",
                                   "--out", ws, "--pin-in", toml, "--work", work};
  for (const auto& s : tiny) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  auto o = run(argv, t.path);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("manifest SHA-256"), std::string::npos) << o.out;
  // Every stage of the recipe ran, in order, each kept with the hash of what made it.
  std::vector<std::string> stages;
  for (const auto& e : fs::directory_iterator(LEAP_SOURCE_DIR "/configs/warm-start"))
    if (e.path().extension() == ".toml")
      stages.push_back(e.path().stem().string());
  // In the order of their leading numbers: 9-... before 10-...
  auto number = [](const std::string& stem) { return std::stoi(stem.substr(0, stem.find('-'))); };
  std::sort(stages.begin(), stages.end(),
            [&](const std::string& a, const std::string& b) { return number(a) < number(b); });
  ASSERT_GE(stages.size(), 2u);
  std::size_t at = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    auto line = "stage " + std::to_string(i + 1) + "/" + std::to_string(stages.size()) + " ("
                + stages[i] + "): leap pretrain";
    auto found = o.out.find(line, at);
    ASSERT_NE(found, std::string::npos) << line << "\n" << o.out;
    at = found;
    EXPECT_TRUE(fs::exists(work + "/" + stages[i] + "/manifest.json")) << stages[i];
    EXPECT_TRUE(fs::exists(work + "/" + stages[i] + ".recipe")) << stages[i];
  }
  // The last stage is what ships.
  EXPECT_EQ(*read_file(ws + "/manifest.json"),
            *read_file(work + "/" + stages.back() + "/manifest.json"));
  // A warm start: weights, tokenizer and manifest, no optimizer moments, nothing left over.
  for (auto f : {"config.json", "model.safetensors", "tokenizer.json", "trainer_state.json",
                 "manifest.json"})
    EXPECT_TRUE(fs::exists(ws + "/" + f)) << f;
  EXPECT_FALSE(fs::exists(ws + "/optimizer.safetensors"));
  EXPECT_FALSE(fs::exists(ws + ".partial"));
  // The copy's pin is renewed to the new manifest; the rest of the file is untouched.
  const std::string pin = pin_in(toml);
  EXPECT_EQ(pin, sha256_hex(*read_file(ws + "/manifest.json")));
  EXPECT_NE(pin, old_pin);
  auto before = *read_file(LEAP_SOURCE_DIR "/configs/quickstart.toml");
  auto after = *read_file(toml);
  EXPECT_EQ(replace_all(after, pin, old_pin), before);
  auto v = policy::verify_pinned_checkpoint(ws, pin);
  EXPECT_TRUE(v.ok()) << v.message();

  // A rerun keeps every stage (nothing changed) and ships the same warm start.
  auto again = run(argv, t.path);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(again.out.find("leap pretrain"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("(" + stages.back() + "): already made, kept"), std::string::npos)
      << again.out;
  EXPECT_EQ(pin_in(toml), pin);

  // `leap train` with the copy refuses the warm start under a pin that is not its own, before
  // training anything.
  std::vector<std::string> train = {LEAP_BINARY, "--config", toml};
  for (const auto& s : tiny) {
    train.push_back("--set");
    train.push_back(s);
  }
  for (const std::string& s : std::vector<std::string>{"train.warm_start=" + ws,
                                                       "train.tasks=[\"vector_add\"]",
                                                       "environment.generated_tasks=0"}) {
    train.push_back("--set");
    train.push_back(s);
  }
  auto wrong = train;
  wrong.insert(wrong.end(), {std::string("--set"), "train.warm_start_sha256=" + old_pin,
                             std::string("train"), std::string("--out"), t.path + "/run"});
  auto r = run(wrong, t.path);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("is not the pinned one"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(pin), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(t.path + "/run/checkpoint"));

  // The right pin but weights changed behind the manifest: refused as damaged, naming the file.
  {
    auto bytes = *read_file(ws + "/model.safetensors");
    bytes[bytes.size() / 2] ^= 1;
    ASSERT_TRUE(write_file_atomic(ws + "/model.safetensors", bytes).ok());
  }
  auto flipped = train;
  flipped.insert(flipped.end(), {std::string("--set"), "train.warm_start_sha256=" + pin,
                                 std::string("train"), std::string("--out"), t.path + "/run2"});
  r = run(flipped, t.path);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("model.safetensors"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(t.path + "/run2/checkpoint"));
}

// The warm start in the repository is the one configs/quickstart.toml pins, whole, and small.
TEST(WarmStartShipped, TheQuickstartPinsTheShippedFilesWhole) {
  auto cfg = config::load_file(LEAP_SOURCE_DIR "/configs/quickstart.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.message();
  ASSERT_EQ(cfg->train.warm_start, "assets/warm_start");
  const std::string dir = LEAP_SOURCE_DIR "/" + cfg->train.warm_start;
  auto v = policy::verify_pinned_checkpoint(dir, cfg->train.warm_start_sha256);
  EXPECT_TRUE(v.ok()) << v.message();
  std::uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir))
    bytes += e.file_size();
  EXPECT_LE(bytes, 16u << 20) << "the shipped warm start is at most 16 MB";
  EXPECT_FALSE(fs::exists(dir + "/optimizer.safetensors"));
}
