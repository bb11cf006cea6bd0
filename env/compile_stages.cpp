#include "env/compile_stages.hpp"

#include "common/strings.hpp"

#include <cstdlib>

namespace leap::env {

const char* to_string(compile_stage s) {
  switch (s) {
    case compile_stage::front_end: return "front_end";
    case compile_stage::device_compile: return "device_compile";
    case compile_stage::rewrite: return "rewrite";
    case compile_stage::host_build: return "host_build";
    case compile_stage::glue: return "glue";
    case compile_stage::link: return "link";
    case compile_stage::other: return "other";
  }
  return "?";
}

const char* display_name(compile_stage s) {
  switch (s) {
    case compile_stage::front_end: return "front end";
    case compile_stage::device_compile: return "device compile";
    case compile_stage::rewrite: return "rewrite";
    case compile_stage::host_build: return "host build";
    case compile_stage::glue: return "glue";
    case compile_stage::link: return "link";
    case compile_stage::other: return "other";
  }
  return "?";
}

nvcc_phase_split parse_nvcc_time_table(const std::string& csv) {
  // Rows (nvcc 12/13): source file name , phase name , phase input files , phase output file ,
  // arch , tool , metric , unit  -- e.g. "a.cu , ptxas , a.ptx , a.cubin , sm_90 , nvcc , 123.8 , ms"
  nvcc_phase_split out;
  for (auto& line : split_lines(csv)) {
    std::vector<std::string> cols;
    for (std::size_t s = 0; s <= line.size();) {
      auto comma = line.find(',', s);
      cols.emplace_back(trim(line.substr(s, comma == std::string::npos ? std::string::npos : comma - s)));
      if (comma == std::string::npos)
        break;
      s = comma + 1;
    }
    if (cols.size() < 8 || cols[7] != "ms")
      continue;
    char* end = nullptr;
    double ms = std::strtod(cols[6].c_str(), &end);
    if (end == cols[6].c_str() || !(ms >= 0))
      continue;
    out.any = true;
    const auto& phase = cols[1];
    if (phase == "ptxas" || phase == "fatbinary" || phase == "nvlink")
      out.device_compile += ms / 1000;
    else if (phase.find("compiling") != std::string::npos) // "gcc (compiling)": the host object
      out.host_build += ms / 1000;
  }
  return out;
}

std::string describe_stages(const compile_stage_seconds& s, bool cached) {
  if (s.empty())
    return cached ? "none (cache hit)" : "none";
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < compile_stage_count; ++i) {
    if (!(s[i] > 0))
      continue;
    out += (out.empty() ? "" : ", ") + std::string(display_name(static_cast<compile_stage>(i))) + " "
           + format_fixed(s[i], 2) + " s";
  }
  return out.empty() ? "none" : out;
}

} // namespace leap::env
