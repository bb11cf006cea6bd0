// leap::result<T>: errors as values at every boundary that is not a CAF actor (those use
// caf::expected). An error is a message a user can act on: it names the file, line and key,
// or the command that failed. Pure value type; safe to use from any thread.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace leap {

struct error {
  std::string message;
};

inline error make_error(std::string message) { return error{std::move(message)}; }

template <class T>
class [[nodiscard]] result {
public:
  result(T value) : v_(std::move(value)) {}
  result(error err) : v_(std::move(err)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const error& err() const { return std::get<1>(v_); }
  const std::string& message() const { return err().message; }

private:
  std::variant<T, error> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
  result() = default;
  result(error err) : err_(std::move(err)), ok_(false) {}

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const error& err() const { return err_; }
  const std::string& message() const { return err_.message; }

private:
  error err_;
  bool ok_ = true;
};

} // namespace leap
