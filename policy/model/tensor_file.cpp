// torch tensors <-> safetensors: see tensor_file.hpp.
#include "policy/model/tensor_file.hpp"

#include <cstring>
#include <vector>

namespace leap::policy {

result<torch::Tensor> tensor_from_entry(const st_file& file, const st_entry& e) {
  try {
    auto raw = file.bytes(e);
    torch::Tensor t;
    switch (e.dtype) {
      case st_dtype::f32: t = torch::empty(e.shape, torch::kFloat); break;
      case st_dtype::i64: t = torch::empty(e.shape, torch::kLong); break;
      case st_dtype::i32: t = torch::empty(e.shape, torch::kInt); break;
      case st_dtype::f16: t = torch::empty(e.shape, torch::kHalf); break;
      case st_dtype::bf16: t = torch::empty(e.shape, torch::kBFloat16); break;
    }
    if (!raw.empty()) std::memcpy(t.data_ptr(), raw.data(), raw.size());
    if (e.dtype == st_dtype::f16 || e.dtype == st_dtype::bf16) t = t.to(torch::kFloat);
    return t;
  } catch (const c10::Error& err) {
    return make_error(std::string("safetensors: ") + err.what_without_backtrace());
  }
}

result<named_tensors> tensors_from_file(const st_file& file) {
  named_tensors out;
  for (const auto& [name, e] : file.entries()) {
    auto t = tensor_from_entry(file, e);
    if (!t) return t.err();
    out.emplace(name, std::move(*t));
  }
  return out;
}

result<named_tensors> load_tensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  auto file = st_file::read(path);
  if (!file) return file.err();
  if (metadata) *metadata = file->metadata();
  auto t = tensors_from_file(*file);
  if (!t) return make_error(path + ": " + t.message());
  return t;
}

result<void> save_tensors(const std::string& path, const named_tensors& tensors,
                          const std::map<std::string, std::string>& metadata) {
  std::vector<torch::Tensor> keep;  // contiguous CPU copies alive until written
  std::vector<st_tensor_view> views;
  try {
    for (const auto& [name, t] : tensors) {
      st_dtype d;
      switch (t.scalar_type()) {
        case torch::kFloat: d = st_dtype::f32; break;
        case torch::kHalf: d = st_dtype::f16; break;
        case torch::kBFloat16: d = st_dtype::bf16; break;
        case torch::kLong: d = st_dtype::i64; break;
        case torch::kInt: d = st_dtype::i32; break;
        default:
          return make_error(path + ": tensor '" + name + "' has unsupported dtype " +
                            std::string(c10::toString(t.scalar_type())));
      }
      auto c = t.detach().to(torch::kCPU).contiguous();
      keep.push_back(c);
      views.push_back({name, d, c.sizes().vec(), c.data_ptr(), static_cast<std::size_t>(c.nbytes())});
    }
  } catch (const c10::Error& err) {
    return make_error(path + ": " + err.what_without_backtrace());
  }
  return write_safetensors(path, views, metadata);
}

} // namespace leap::policy
