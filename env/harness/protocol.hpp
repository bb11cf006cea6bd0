// The job protocol between leap (parent) and a candidate/reference process (the harness):
// file names, the deterministic input generator and the canary/poison constants. Header-only,
// no dependencies, compiled into both leap and the harness; pure functions, any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace leap::harness {

// Files inside the process's working directory.
inline constexpr const char* job_file = "job.txt";
inline constexpr const char* status_file = "status.txt";
inline constexpr const char* outputs_file = "outputs.bin";
inline constexpr const char* inputs_file = "inputs.bin";
inline constexpr const char* repeat_file = "repeat.bin"; // outputs of a second identical call
inline constexpr const char* timed_file = "timed.bin";   // outputs of every timed call, in order

// Bytes in front of and behind every buffer; front keeps 256-byte alignment of the data.
inline constexpr std::size_t canary_front = 256;
inline constexpr std::size_t canary_back = 4096;
inline constexpr unsigned char canary_byte = 0xA5;
// Each pointer argument gets its own canary byte (argument 0: canary_byte), so an out-of-bounds
// read of one buffer's canary copied past the end of another buffer still changes that one's.
inline constexpr unsigned char canary_of(std::size_t arg) {
  return static_cast<unsigned char>(canary_byte + 0x3D * arg);
}
// Outputs are filled with this 32-bit pattern (a quiet NaN as float) before every run.
inline constexpr std::uint32_t poison_bits = 0x7FC0DEADu;

enum init_kind : int { init_uniform = 0, init_normal, init_randint, init_zeros, init_ones, init_constant };

// splitmix64: seeds the per-buffer stream from (seed, size set, trial, argument).
inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct rng {
  std::uint64_t s[4];
  rng(std::uint64_t seed, std::uint64_t size_set, std::uint64_t trial, std::uint64_t arg) {
    std::uint64_t x = seed ^ (size_set * 0x1000193ull) ^ (trial << 20) ^ (arg << 40);
    for (auto& v : s)
      v = splitmix64(x);
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() { // xoshiro256**
    std::uint64_t r = rotl(s[1] * 5, 7) * 9;
    std::uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
  double uniform01() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
};

// Fills `n` values of a float (is_int = false) or int32 buffer.
inline void fill(void* out, long long n, bool is_int, int kind, double a, double b, rng& g) {
  auto* f = static_cast<float*>(out);
  auto* i = static_cast<std::int32_t*>(out);
  for (long long k = 0; k < n; ++k) {
    double v = 0;
    switch (kind) {
      case init_uniform: v = a + (b - a) * g.uniform01(); break;
      case init_normal: {
        double u1 = g.uniform01(), u2 = g.uniform01();
        if (u1 < 1e-300) u1 = 1e-300;
        v = a + b * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        break;
      }
      case init_randint: {
        auto span = static_cast<std::uint64_t>(b - a + 1);
        v = a + static_cast<double>(g.next() % span);
        break;
      }
      case init_zeros: v = 0; break;
      case init_ones: v = 1; break;
      case init_constant: v = a; break;
    }
    if (is_int)
      i[k] = static_cast<std::int32_t>(v);
    else
      f[k] = static_cast<float>(v);
  }
}

} // namespace leap::harness
