// kv_cache: per-layer key/value buffers for incremental decoding with the decoder
// (decoder.hpp). Preallocated to a capacity and grown (doubling) when a step would overflow it.
// Besides K/V it remembers which cached positions are real tokens (padding mask) and each row's
// next position id, so left-padded batches decode correctly. Owned by one decoding loop: not
// thread-safe; build one per sampling call.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace leap::policy {

struct kv_cache {
  std::vector<torch::Tensor> k;  // per layer [B, n_kv, capacity, Dh]
  std::vector<torch::Tensor> v;  // per layer [B, n_kv, capacity, Dh]
  torch::Tensor key_valid;       // [B, capacity] bool: position holds a real (non-pad) token
  torch::Tensor next_pos;        // [B] int64: rotary position id of the row's next real token
  std::int64_t length = 0;       // filled positions (same for every row)

  std::int64_t batch() const { return key_valid.defined() ? key_valid.size(0) : 0; }
  std::int64_t capacity() const { return key_valid.defined() ? key_valid.size(1) : 0; }

  // Empty cache for `batch` rows and `capacity` positions; K/V take `options` (dtype, device).
  static kv_cache make(std::int64_t n_layers, std::int64_t batch, std::int64_t n_kv_heads,
                       std::int64_t head_dim, std::int64_t capacity, const torch::TensorOptions& options) {
    kv_cache c;
    for (std::int64_t l = 0; l < n_layers; ++l) {
      c.k.push_back(torch::zeros({batch, n_kv_heads, capacity, head_dim}, options));
      c.v.push_back(torch::zeros({batch, n_kv_heads, capacity, head_dim}, options));
    }
    c.key_valid = torch::zeros({batch, capacity}, options.dtype(torch::kBool));
    c.next_pos = torch::zeros({batch}, options.dtype(torch::kLong));
    return c;
  }

  // Makes room for `extra` more positions (capacity doubles as needed; contents kept).
  void reserve(std::int64_t extra) {
    const std::int64_t need = length + extra;
    if (need <= capacity()) return;
    std::int64_t cap = std::max<std::int64_t>(capacity(), 16);
    while (cap < need) cap *= 2;
    auto grow = [&](const torch::Tensor& t, std::int64_t dim) {
      auto sizes = t.sizes().vec();
      sizes[dim] = cap - t.size(dim);
      return torch::cat({t, torch::zeros(sizes, t.options())}, dim);
    };
    for (auto& t : k) t = grow(t, 2);
    for (auto& t : v) t = grow(t, 2);
    key_valid = grow(key_valid, 1);
  }

  // Keeps the given rows, in order (rows may repeat): expands a prefilled prompt to a group
  // (index [0, 0, ..., 0]) or drops finished sequences. `rows`: [B'] int64 on any device.
  void select_rows(const torch::Tensor& rows) {
    auto idx = rows.to(key_valid.device(), torch::kLong);
    for (auto& t : k) t = t.index_select(0, idx);
    for (auto& t : v) t = t.index_select(0, idx);
    key_valid = key_valid.index_select(0, idx);
    next_pos = next_pos.index_select(0, idx);
  }
};

} // namespace leap::policy
