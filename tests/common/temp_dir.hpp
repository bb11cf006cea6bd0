// A temporary directory for one test, under leap's temp root, removed with everything in it
// when the object goes. Test code only; use it from the test's thread. A directory that cannot be
// made fails the test (and leaves `path` empty).
#pragma once

#include "common/fs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace leap::test {

struct temp_dir {
  explicit temp_dir(const std::string& prefix = "leap-test-") {
    auto d = make_temp_dir(temp_root(), prefix);
    EXPECT_TRUE(d.ok()) << d.message();
    if (d)
      path = *d;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path.empty())
      std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  std::string path;
};

} // namespace leap::test
