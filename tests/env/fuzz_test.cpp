// Bounded fuzz loops over everything that parses untrusted or hand-written text: task files and
// config files mutated from the bundled ones must give a clear error naming the file and
// position (or load), never a crash; the <<<>>> rewriter, the static guards and the code
// extractor must survive arbitrary mutations of real candidates and completions.
#include "common/fs.hpp"
#include "env/cpu_emu/rewriter.hpp"
#include "env/guards.hpp"
#include "env/task.hpp"
#include "policy/text/code_extract.hpp"
#include "runtime/config/config.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

namespace fs = std::filesystem;
using namespace leap;

namespace {

const std::vector<std::string> fragments = {
  "\"", "'", "[", "]", "[[", "]]", "{", "}", "=", "\n", "[[args]]", "[[sizes]]", "\"\"\"", "#",
  "<<<", ">>>", "/*", "*/", "//", "R\"(", ")\"", "\\", "(", ")", ",", "-1", "1e400", "0x",
  "999999999999999999999", "nan", "inf", "true", "= {", "__shared__", "extern __shared__",
  "template <", ">", "<", ";", "__syncthreads();", "```", "```cuda\n", "solution(", "\t", " ",
  "role = \"output\"", "init = \"normal(0, 0)\"", "shape = \"n/0\"", "level = 7", "name = \"\"",
  "workers = -3", "[compiler]", "[nope]", "timeout_seconds = \"x\"", "nvcc_flags = [1, 2]"};

std::string mutate(std::string s, std::mt19937_64& g) {
  int ops = 1 + static_cast<int>(g() % 4);
  for (int k = 0; k < ops; ++k) {
    std::size_t pos = s.empty() ? 0 : g() % (s.size() + 1);
    switch (g() % 6) {
      case 0: // delete a range
        if (!s.empty())
          s.erase(std::min(pos, s.size() - 1), 1 + g() % 24);
        break;
      case 1: // insert a fragment
        s.insert(pos, fragments[g() % fragments.size()]);
        break;
      case 2: // insert a random byte
        s.insert(pos, 1, static_cast<char>(g() % 256));
        break;
      case 3: { // duplicate a line
        auto b = s.rfind('\n', pos == 0 ? 0 : pos - 1);
        b = b == std::string::npos ? 0 : b + 1;
        auto e = s.find('\n', pos);
        e = e == std::string::npos ? s.size() : e;
        s.insert(b, s.substr(b, e - b) + "\n");
        break;
      }
      case 4: // truncate
        s.resize(pos);
        break;
      case 5: // flip a character
        if (!s.empty())
          s[std::min(pos, s.size() - 1)] ^= static_cast<char>(1 + g() % 127);
        break;
    }
  }
  return s;
}

std::vector<std::string> files_under(const std::string& dir, const std::string& name_or_ext) {
  std::vector<std::string> out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()
        && (e.path().filename() == name_or_ext || e.path().extension() == name_or_ext))
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// "<path>:<line>:<column>: " at the start of the first line.
bool names_position(const std::string& msg, const std::string& path) {
  static const std::regex pos(R"(^:(\d+):(\d+): )");
  if (msg.rfind(path, 0) != 0)
    return false;
  return std::regex_search(msg.substr(path.size()), pos);
}

} // namespace

TEST(Fuzz, MalformedTaskFilesGiveFileLineColumnErrors) {
  auto specs = files_under(std::string(LEAP_SOURCE_DIR) + "/tasks", "task.toml");
  ASSERT_FALSE(specs.empty());
  auto root = *make_temp_dir(temp_root(), "leap-fuzz-");
  std::mt19937_64 g(20261130);
  int loaded = 0, rejected = 0;
  for (int it = 0; it < 400; ++it) {
    const auto& src = specs[it % specs.size()];
    auto name = fs::path(src).parent_path().filename().string();
    auto dir = root + "/" + name;
    fs::create_directories(dir);
    fs::copy_file(fs::path(src).parent_path() / "reference.cu", dir + "/reference.cu",
                  fs::copy_options::overwrite_existing);
    auto text = mutate(*read_file(src), g);
    auto path = dir + "/task.toml";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    auto r = env::load_task(path);
    if (r.ok()) {
      ++loaded;
      continue;
    }
    ++rejected;
    EXPECT_TRUE(names_position(r.message(), path)) << "iteration " << it << ": " << r.message();
  }
  std::printf("[ fuzz ] task files: %d rejected with a position, %d still valid\n", rejected, loaded);
  EXPECT_GT(rejected, 100);
  fs::remove_all(root);
}

TEST(Fuzz, MalformedConfigFilesGiveFileLineColumnErrors) {
  auto base = *read_file(std::string(LEAP_SOURCE_DIR) + "/configs/default.toml");
  auto quick = *read_file(std::string(LEAP_SOURCE_DIR) + "/configs/quickstart.toml");
  std::mt19937_64 g(7);
  int rejected = 0;
  for (int it = 0; it < 400; ++it) {
    auto text = mutate(it % 2 ? base : quick, g);
    auto r = config::load_string(text, "fuzz.toml");
    if (r.ok())
      continue;
    ++rejected;
    EXPECT_TRUE(names_position(r.message(), "fuzz.toml")) << "iteration " << it << ": " << r.message();
  }
  EXPECT_GT(rejected, 100);
}

TEST(Fuzz, RewriterGuardsAndExtractorSurviveMutatedSources) {
  std::vector<std::string> sources;
  for (auto& dir : {"/tests/env/candidates", "/tests/env/adversarial", "/tests/env/cpu_emu/candidates", "/tasks"})
    for (auto& f : files_under(std::string(LEAP_SOURCE_DIR) + dir, ".cu"))
      sources.push_back(*read_file(f));
  ASSERT_FALSE(sources.empty());
  std::mt19937_64 g(99);
  int rewrote = 0, refused = 0, extracted = 0;
  double worst = 0;
  for (int it = 0; it < 1500; ++it) {
    auto text = mutate(sources[it % sources.size()], g);
    auto t0 = std::chrono::steady_clock::now();
    auto rw = emu::rewrite_cuda_source(text, "solution.cu");
    (void)env::static_check(text, {});
    auto completion = (g() % 2 ? "Here is my kernel:\n```cuda\n" : "") + text
                      + (g() % 2 ? "\n```\nThis should be fast." : "");
    auto ex = policy::extract_code(mutate(completion, g));
    worst = std::max(worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    (rw.ok ? rewrote : refused)++;
    if (rw.ok) {
      EXPECT_TRUE(!rw.code.empty());
    } else {
      EXPECT_FALSE(rw.error.empty()) << "iteration " << it;
    }
    if (ex.ok) {
      ++extracted;
      EXPECT_FALSE(ex.code.empty());
    } else {
      EXPECT_FALSE(ex.reason.empty());
    }
  }
  std::printf("[ fuzz ] rewriter: %d rewritten, %d refused with a reason; extractor found code in "
              "%d; slowest iteration %.3f s\n", rewrote, refused, extracted, worst);
  EXPECT_LT(worst, 2.0);
}
