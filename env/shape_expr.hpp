// Shape expressions of task arguments ("n", "M*K", "n - k + 1", "(rows+1)*cols"): integer
// arithmetic over the task's int arguments. Pure and thread-safe.
#pragma once

#include "common/result.hpp"

#include <map>
#include <string>
#include <string_view>

namespace leap::env {

// Evaluates `expr` with + - * / (integer division), parentheses, integer literals and
// identifiers looked up in `vars`. Errors name the offending token and its column.
result<long long> eval_shape(std::string_view expr, const std::map<std::string, long long>& vars);

} // namespace leap::env
