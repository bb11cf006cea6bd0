// Choosing the fused decode step's loops: see decode_path.hpp.
#include "policy/model/decode_path.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

namespace leap::policy {
namespace {

// -1: none set (the environment decides); else a decode_path.
std::atomic<int> forced_path{-1};

// The environment's request, read once: LEAP_DECODE_PATH, else LEAP_DECODE_PORTABLE (set and not
// "0"), else none. An error for an unknown LEAP_DECODE_PATH.
const result<std::optional<decode_path>>& env_request() {
  static const result<std::optional<decode_path>> request = []() -> result<std::optional<decode_path>> {
    if (const char* v = std::getenv("LEAP_DECODE_PATH"); v != nullptr && *v != '\0') {
      if (auto p = parse_decode_path(v)) return std::optional<decode_path>(*p);
      return make_error(std::string("LEAP_DECODE_PATH=") + v +
                        " is not a decode path (avx512, avx2, portable or libtorch)");
    }
    if (const char* v = std::getenv("LEAP_DECODE_PORTABLE"); v != nullptr && std::string(v) != "0")
      return std::optional<decode_path>(decode_path::portable);
    return std::optional<decode_path>();
  }();
  return request;
}

decode_path best_for_cpu() {
  if (cpu_supports(decode_path::avx512)) return decode_path::avx512;
  if (cpu_supports(decode_path::avx2)) return decode_path::avx2;
  return decode_path::portable;
}

error lacks(decode_path p, const char* how) {
  return make_error(std::string(how) + to_string(p) + ": this CPU lacks " +
                    (p == decode_path::avx512 ? "AVX-512 (avx512f and avx512dq)" : "AVX2 and FMA"));
}

} // namespace

const char* to_string(decode_path p) {
  switch (p) {
    case decode_path::libtorch: return "libtorch";
    case decode_path::portable: return "portable";
    case decode_path::avx2: return "avx2";
    case decode_path::avx512: return "avx512";
  }
  return "?";
}

std::optional<decode_path> parse_decode_path(std::string_view s) {
  for (auto p : {decode_path::libtorch, decode_path::portable, decode_path::avx2, decode_path::avx512})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

bool cpu_supports(decode_path p) {
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  switch (p) {
    case decode_path::avx512: return avx512;
    case decode_path::avx2: return avx2;
    default: return true;
  }
}

result<decode_path> selected_decode_path() {
  if (const int f = forced_path.load(std::memory_order_relaxed); f >= 0) return static_cast<decode_path>(f);
  const auto& env = env_request();
  if (!env.ok()) return env.err();
  if (!env->has_value()) return best_for_cpu();
  const auto p = **env;
  if (!cpu_supports(p)) return lacks(p, "LEAP_DECODE_PATH=");
  return p;
}

result<void> set_decode_path(std::optional<decode_path> p) {
  if (p && !cpu_supports(*p)) return lacks(*p, "decode path ");
  forced_path.store(p ? static_cast<int>(*p) : -1, std::memory_order_relaxed);
  return {};
}

} // namespace leap::policy
