#include "actors/task_progress.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <random>

namespace leap::actors {

void task_progress::mark(int e, int index, std::size_t tasks) {
  consumed[e].insert(index);
  // Epochs before the earliest incomplete one are complete and forgotten.
  while (consumed[epoch].size() >= tasks && tasks > 0) {
    consumed.erase(epoch);
    ++epoch;
  }
}

std::vector<int> epoch_order(std::size_t tasks, std::uint64_t seed, int epoch) {
  std::vector<int> order(tasks);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(epoch) * 7919ull + 1);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

std::string progress_to_json(const task_progress& p) {
  nlohmann::json j;
  j["epoch"] = p.epoch;
  auto c = nlohmann::json::object();
  for (auto& [e, s] : p.consumed)
    if (!s.empty())
      c[std::to_string(e)] = std::vector<int>(s.begin(), s.end());
  j["consumed"] = c;
  return j.dump();
}

bool progress_from_json(const std::string& text, task_progress& out) {
  try {
    auto j = nlohmann::json::parse(text);
    task_progress p;
    p.epoch = j.at("epoch").get<int>();
    for (auto& [k, v] : j.at("consumed").items())
      for (auto& i : v)
        p.consumed[std::stoi(k)].insert(i.get<int>());
    out = std::move(p);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

} // namespace leap::actors
