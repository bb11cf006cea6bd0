// Parsing of a task's entry signature `extern "C" void solution(const float* a, int n)` into
// typed parameters. Supported C types: const float*, float*, const int*, int*, int.
// Pure and thread-safe.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace leap::env {

enum class scalar_kind { f32, i32 };

struct param {
  std::string name;
  scalar_kind kind = scalar_kind::f32;
  bool is_pointer = false;
  bool is_const = false;
  // Canonical C spelling, e.g. "const float*".
  std::string c_type() const;
};

result<std::vector<param>> parse_signature(std::string_view signature);

// `extern "C" void <fn>(<params>)` with canonical spelling.
std::string render_signature(const std::vector<param>& params, std::string_view fn = "solution");

} // namespace leap::env
