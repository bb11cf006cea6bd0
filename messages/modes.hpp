// The pipeline's modes, shared by the config registry (their TOML names), the actors that act on
// them and the messages that carry them: how stages are scheduled (`train.mode`) and which
// finished groups make a learner step (`train.batch_order`). Plain enums with their names; no
// CAF here (messages/enum_inspect.hpp serialises them). Pure; any thread.
#pragma once

#include <cstdint>
#include <string>

namespace leap::msg {

// async: every attempt flows on as soon as its own step is done; sync: stage barriers over all
// groups in flight (generate all, compile all, execute all), for comparison.
enum class train_mode : std::uint8_t { async, sync };

// admission: a learner step trains on the B groups admitted for it, whatever order they finish
// in; finish: on the first B groups to finish.
enum class batch_order : std::uint8_t { admission, finish };

inline const char* to_string(train_mode m) { return m == train_mode::sync ? "sync" : "async"; }
inline const char* to_string(batch_order o) {
  return o == batch_order::finish ? "finish" : "admission";
}

inline bool parse_train_mode(const std::string& text, train_mode& out) {
  for (auto m : {train_mode::async, train_mode::sync})
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  return false;
}

inline bool parse_batch_order(const std::string& text, batch_order& out) {
  for (auto o : {batch_order::admission, batch_order::finish})
    if (text == to_string(o)) {
      out = o;
      return true;
    }
  return false;
}

} // namespace leap::msg
