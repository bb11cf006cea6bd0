// tensor_file: named torch tensors <-> safetensors files (on top of safetensors.hpp). Loading
// converts F16/BF16 to float32 and keeps F32/I64/I32; saving keeps each tensor's dtype (float32,
// float16, bfloat16, int64, int32), moving it to the CPU first. Free functions; thread-safe.
#pragma once

#include "common/result.hpp"
#include "policy/model/safetensors.hpp"

#include <torch/torch.h>

#include <map>
#include <string>

namespace leap::policy {

using named_tensors = std::map<std::string, torch::Tensor>;

// Every tensor of a parsed file, as CPU tensors (F16/BF16 converted to float32).
result<named_tensors> tensors_from_file(const st_file& file);
// One entry of a parsed file, converted the same way.
result<torch::Tensor> tensor_from_entry(const st_file& file, const st_entry& entry);
result<named_tensors> load_tensors(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);
// Writes atomically (temp file + rename).
result<void> save_tensors(const std::string& path, const named_tensors& tensors,
                          const std::map<std::string, std::string>& metadata = {});

} // namespace leap::policy
