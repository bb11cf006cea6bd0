// Shared by the tests that compare leap with Hugging Face's Python libraries (chat_template_test.cpp,
// hf_transformers_test.cpp): the test-only virtual environment's python (LEAP_TEST_PYTHON, made by
// scripts/install-test-deps.sh from tests/python/requirements.lock), the reference scripts in
// tests/python/reference/, running one with shell redirections, and a temporary directory removed
// at the end of the test. Test code only; needs LEAP_SOURCE_DIR and LEAP_TEST_PYTHON.
#pragma once

#include "common/fs.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace leap::test {

inline const std::string test_python = LEAP_TEST_PYTHON;
inline const std::string reference_dir = std::string(LEAP_SOURCE_DIR) + "/tests/python/reference";

// Why the reference cannot run here, or "" when it can.
inline std::string missing_python() {
  if (!std::filesystem::exists(test_python))
    return test_python + " is missing: run scripts/install-test-deps.sh (`make test` runs it)";
  return "";
}

// `s` as one single-quoted shell word.
inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `python reference_dir/<script> <args>` (args already shell-quoted) with stdin from `in`
// (none when empty) and stdout to `out`; stderr goes to `err`. Fails the test (naming the command
// and showing stderr) on a non-zero exit; returns whether it succeeded.
inline bool run_reference(const std::string& script, const std::string& args, const std::string& in,
                          const std::string& out, const std::string& err) {
  std::string cmd = quoted(test_python) + " " + quoted(reference_dir + "/" + script) + " " + args;
  if (!in.empty()) cmd += " < " + quoted(in);
  cmd += " > " + quoted(out) + " 2> " + quoted(err);
  const int rc = std::system(cmd.c_str());
  auto text = read_file(err);
  EXPECT_EQ(rc, 0) << "reference failed: " << cmd << "\n" << (text ? *text : text.message());
  return rc == 0;
}

} // namespace leap::test
