// decode_path: which loops the sampler's fused decode step (decode_step.hpp) runs on this CPU, and
// the switch that forces one for tests and benchmarks. Torch-free.
//
// By default the best the CPU has: avx512 (AVX-512 F and DQ), else avx2 (AVX2 and FMA), else
// portable (C++ with the compiler's vector extension, SSE2 on x86-64; it beats LibTorch's path
// too, docs/results.md "Decode on AVX2 and without either"). The environment
// variable LEAP_DECODE_PATH=avx512|avx2|portable|libtorch forces one (libtorch: no fused step,
// the sampler runs decoder_impl::forward_cached); LEAP_DECODE_PORTABLE=1 is an older alias of
// portable. A forced path the CPU lacks is refused, not replaced by another: selected_decode_path
// is then an error saying why, decode_step::make returns null (decoding stays correct, through
// LibTorch) and says so once on stderr, and the tests of that path skip with the message. A
// test or benchmark must never report on loops other than the ones it asked for.
//
// Threads: every function may be called from any thread; set_decode_path affects the decode steps
// made after it (decode_step::make, decoder_impl::fused_step), not the ones already made.
#pragma once

#include "common/result.hpp"

#include <optional>
#include <string_view>

namespace leap::policy {

enum class decode_path { libtorch, portable, avx2, avx512 };

const char* to_string(decode_path p);
// "avx512" -> avx512 etc.; nullopt for anything else.
std::optional<decode_path> parse_decode_path(std::string_view s);

// Whether this CPU can run `p` (libtorch and portable: always).
bool cpu_supports(decode_path p);

// The path the decode steps made now use: set_decode_path's, else the environment's, else the
// best the CPU has. An error when the forced path is unknown or the CPU lacks it.
result<decode_path> selected_decode_path();

// Forces `p` for the steps made from now on, over the environment (bench_sampling compares the
// paths in one process); nullopt returns to the environment's choice. Refused, changing nothing,
// when the CPU lacks `p`.
result<void> set_decode_path(std::optional<decode_path> p);

} // namespace leap::policy
