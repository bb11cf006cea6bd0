#include "actors/batch_buffer.hpp"

#include <algorithm>

namespace leap::actors {

batch_buffer::batch_buffer(int batch_groups, batch_order order, std::uint64_t first_id)
  : batch_(static_cast<std::size_t>(std::max(1, batch_groups))), order_(order), next_id_(first_id) {}

void batch_buffer::push(msg::scored_group g) {
  if (order_ == batch_order::finish) {
    arrived_.push_back(std::move(g));
    return;
  }
  auto id = g.group.group_id;
  by_id_.insert_or_assign(id, std::move(g));
}

std::optional<std::vector<msg::scored_group>> batch_buffer::pop() {
  std::vector<msg::scored_group> out;
  if (order_ == batch_order::finish) {
    if (arrived_.size() < batch_)
      return std::nullopt;
    for (std::size_t i = 0; i < batch_; ++i) {
      out.push_back(std::move(arrived_.front()));
      arrived_.pop_front();
    }
    return out;
  }
  for (std::size_t i = 0; i < batch_; ++i)
    if (!by_id_.count(next_id_ + i))
      return std::nullopt;
  for (std::size_t i = 0; i < batch_; ++i) {
    auto it = by_id_.find(next_id_ + i);
    out.push_back(std::move(it->second));
    by_id_.erase(it);
  }
  next_id_ += batch_;
  return out;
}

std::size_t batch_buffer::size() const {
  return order_ == batch_order::finish ? arrived_.size() : by_id_.size();
}

} // namespace leap::actors
