// `leap tokenize` end to end: the binary's ids equal the tokenizer's own for each stdin line
// (special tokens matched, nothing added), and a bad line, a missing option or an unloadable
// tokenizer is a clear error (the line number, the path) with exit code 2.
#include "common/fs.hpp"
#include "policy/text/tokenizer.hpp"
#include "common/strings.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

using namespace leap;
namespace fs = std::filesystem;

namespace {

std::string read_or_empty(const std::string& path) {
  auto t = read_file(path);
  return t ? *t : std::string();
}

struct tokenize_run {
  int exit_code = -1;
  std::string out, err;
};

class TokenizeCli : public ::testing::Test {
protected:
  void SetUp() override {
    auto d = make_temp_dir(temp_root(), "leap-tokenize-");
    ASSERT_TRUE(d.ok()) << d.message();
    dir_ = *d;
    auto tok = policy::tokenizer::from_merges({{"h", "e"}, {"l", "l"}, {"he", "ll"}, {" ", "w"}},
                                              {"<|eos|>", "<|bos|>"});
    ASSERT_TRUE(tok.ok()) << tok.message();
    tok_ = std::make_unique<policy::tokenizer>(*tok);
    ASSERT_TRUE(tok_->save(dir_ + "/tokenizer.json").ok());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Runs `leap tokenize <args>` with `input` on stdin.
  tokenize_run run(const std::string& args, const std::string& input) {
    EXPECT_TRUE(write_file_atomic(dir_ + "/in.jsonl", input).ok());
    std::string cmd = std::string(LEAP_BINARY) + " tokenize " + args + " < '" + dir_
                      + "/in.jsonl' > '" + dir_ + "/out.txt' 2> '" + dir_ + "/err.txt'";
    int status = std::system(cmd.c_str());
    tokenize_run r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_or_empty(dir_ + "/out.txt");
    r.err = read_or_empty(dir_ + "/err.txt");
    return r;
  }

  std::string dir_;
  std::unique_ptr<policy::tokenizer> tok_;
};

} // namespace

TEST_F(TokenizeCli, IdsEqualTheTokenizersForEachLine) {
  const std::vector<std::string> texts = {"hello world", "<|bos|>hello<|eos|>", "", "caf\xC3\xA9 \xE6\x97\xA5\n\r\n",
                                          "DON'T I'LL 12345"};
  std::string input;
  for (const auto& t : texts) input += nlohmann::json(t).dump() + "\n";
  auto r = run("--tokenizer '" + dir_ + "/tokenizer.json' --jsonl", input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), texts.size()) << r.out;
  for (std::size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(nlohmann::json::parse(lines[i]).get<std::vector<int>>(), tok_->encode(texts[i], true))
        << "line " << i + 1;
  // Special tokens are single ids, and nothing is added around the text.
  EXPECT_EQ(nlohmann::json::parse(lines[1]).front().get<int>(), tok_->token_id("<|bos|>"));
  EXPECT_EQ(nlohmann::json::parse(lines[1]).back().get<int>(), tok_->token_id("<|eos|>"));
  EXPECT_EQ(lines[2], "[]");
}

TEST_F(TokenizeCli, BadLineIsAnErrorNamingItsNumber) {
  auto r = run("--tokenizer '" + dir_ + "/tokenizer.json' --jsonl", "\"ok\"\n\"fine\"\n{\"text\": 1}\n\"never\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("stdin line 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a string"), std::string::npos) << r.err;
  EXPECT_EQ(split_lines(r.out).size(), 2u) << r.out; // the lines before it were answered

  r = run("--tokenizer '" + dir_ + "/tokenizer.json' --jsonl", "\"ok\"\nnot json\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("stdin line 2 is not valid JSON"), std::string::npos) << r.err;

  r = run("--tokenizer '" + dir_ + "/tokenizer.json' --jsonl", "\"ok\"\n\n\"x\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("stdin line 2 is empty"), std::string::npos) << r.err;
}

TEST_F(TokenizeCli, MissingOptionsAndBadTokenizerAreUsageErrors) {
  auto r = run("--jsonl", "\"x\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tokenizer FILE is required"), std::string::npos) << r.err;
  r = run("--tokenizer '" + dir_ + "/tokenizer.json'", "\"x\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--jsonl is required"), std::string::npos) << r.err;
  r = run("--tokenizer '" + dir_ + "/missing.json' --jsonl", "\"x\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir_ + "/missing.json"), std::string::npos) << r.err;
}
