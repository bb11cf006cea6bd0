// Which verification backend builds and runs a candidate: the real CUDA device or leap's
// CUDA-on-CPU emulation. Plain enum with its names ("cpu", "cuda": the text used in JSON output,
// cache keys and configs). Pure; any thread.
#pragma once

#include <cstdint>
#include <string>

namespace leap::env {

enum class backend : std::uint8_t { cpu, cuda };

const char* to_string(backend b);
bool parse_backend(const std::string& text, backend& out);

} // namespace leap::env
