// safetensors: our own reader and writer of the safetensors format (8-byte little-endian header
// length, JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}, then the
// raw little-endian tensor bytes). Byte-level and LibTorch-free; tensor_file.hpp converts to and
// from torch tensors. Every offset and size is validated with an error naming the tensor.
// Value types and free functions: safe from any thread (a file object is immutable once read).
#pragma once

#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace leap::policy {

enum class st_dtype { f32, f16, bf16, i64, i32 };

const char* st_dtype_name(st_dtype d);        // "F32", "F16", "BF16", "I64", "I32"
std::size_t st_dtype_size(st_dtype d);        // bytes per element
result<st_dtype> st_dtype_from_name(std::string_view name);

// One tensor of a parsed file: where its bytes lie in the data section.
struct st_entry {
  st_dtype dtype = st_dtype::f32;
  std::vector<std::int64_t> shape;
  std::size_t begin = 0;  // byte offsets into the data section, [begin, end)
  std::size_t end = 0;
  std::int64_t numel() const;
};

// A whole safetensors file held in memory (header parsed and validated).
class st_file {
public:
  // Parses a complete file image; `source` names it in error messages.
  static result<st_file> parse(std::string bytes, const std::string& source = "safetensors");
  static result<st_file> read(const std::string& path);

  const std::map<std::string, st_entry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const st_entry* find(const std::string& name) const;
  // The raw little-endian bytes of one entry (valid while this object lives).
  std::string_view bytes(const st_entry& e) const;
  // Values of a floating entry (F32/F16/BF16) converted to float32.
  result<std::vector<float>> to_f32(const std::string& name) const;

private:
  std::string buffer_;
  std::size_t data_start_ = 0;
  std::map<std::string, st_entry> entries_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: the caller keeps `data` alive during the call.
struct st_tensor_view {
  std::string name;
  st_dtype dtype = st_dtype::f32;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t nbytes = 0;  // must equal numel * dtype size
};

// The complete file image (header padded with spaces to a multiple of 8 bytes).
result<std::string> serialize_safetensors(const std::vector<st_tensor_view>& tensors,
                                          const std::map<std::string, std::string>& metadata = {});
// Streams the file to "<path>.tmp.<random>", fsyncs, then renames over `path`.
result<void> write_safetensors(const std::string& path, const std::vector<st_tensor_view>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

float f16_to_f32(std::uint16_t h);
float bf16_to_f32(std::uint16_t b);
std::uint16_t f32_to_f16(float f);   // round to nearest even
std::uint16_t f32_to_bf16(float f);  // round to nearest even

} // namespace leap::policy
