// CAF inspect() for every floating-point field that travels in leap's messages: carried as its
// IEEE-754 bits (u64 for double, u32 for float, vectors of them for vectors), so NaN (payload and
// sign), the infinities, -0 and subnormals arrive bit for bit. CAF 0.17's own float encoding
// (caf::detail::pack754) halves an infinity until it is below 2, which never happens: the
// serialising thread (the middleman's multiplexer, for a remote reply) spins forever, and verdicts
// do hold infinities (a candidate that leaves its output unwritten gets max_abs_error = inf). It
// also turns a NaN into -1 and a subnormal into a huge number. A message's inspect() passes a
// float field as `float_field(x.f)`; messages/build_identity.cpp refuses (at compile time) a
// message type with a bare float anywhere in it. Included by the message headers only (it pulls in CAF's meta
// annotations); any thread.
#pragma once

#include <caf/deep_to_string.hpp>
#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace leap::msg::detail {

// The bits type of a float type, recursively through vectors, and its name on the wire.
template <class T>
struct ieee_bits;
template <>
struct ieee_bits<double> {
  using type = std::uint64_t;
  static constexpr const char* name = "leap_f64";
};
template <>
struct ieee_bits<float> {
  using type = std::uint32_t;
  static constexpr const char* name = "leap_f32";
};
template <class T>
struct ieee_bits<std::vector<T>> {
  using type = std::vector<typename ieee_bits<T>::type>;
  static constexpr const char* name =
    std::is_same<T, double>::value ? "leap_f64_vec"
    : std::is_same<T, float>::value ? "leap_f32_vec"
                                    : "leap_float_vecs";
};

template <class F, std::enable_if_t<std::is_floating_point<F>::value, int> = 0>
typename ieee_bits<F>::type to_bits(F x) {
  static_assert(sizeof(F) == sizeof(typename ieee_bits<F>::type), "IEEE-754 binary32/64 only");
  typename ieee_bits<F>::type b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
template <class T>
typename ieee_bits<std::vector<T>>::type to_bits(const std::vector<T>& xs) {
  typename ieee_bits<std::vector<T>>::type out;
  out.reserve(xs.size());
  for (const auto& x : xs)
    out.push_back(to_bits(x));
  return out;
}

template <class F, std::enable_if_t<std::is_floating_point<F>::value, int> = 0>
void from_bits(typename ieee_bits<F>::type b, F& x) {
  std::memcpy(&x, &b, sizeof x);
}
template <class T>
void from_bits(const typename ieee_bits<std::vector<T>>::type& bs, std::vector<T>& xs) {
  xs.resize(bs.size());
  for (std::size_t i = 0; i < bs.size(); ++i)
    from_bits<>(bs[i], xs[i]);
}

// A float field (or a vector of them, or a vector of such vectors) as it travels.
template <class T>
struct ieee_field {
  T& value;
};

template <class Inspector, class T>
typename Inspector::result_type inspect(Inspector& f, ieee_field<T>& x) {
  // Saving reads `bits`; loading fills it and the callback writes the value back. (Loading
  // starts from the field's default, so converting it first costs nothing there.)
  auto bits = to_bits(x.value);
  auto load = caf::meta::load_callback([&]() -> caf::error {
    from_bits(bits, x.value);
    return caf::none;
  });
  return f(caf::meta::type_name(ieee_bits<T>::name), bits, load);
}

// Printed as the value (CAF's deep_to_string, e.g. in logs), not as bits.
template <class T>
std::string to_string(const ieee_field<T>& x) {
  return caf::deep_to_string(x.value);
}

} // namespace leap::msg::detail

namespace leap::msg {

// The field wrapper of a floating-point message field.
inline detail::ieee_field<double> float_field(double& x) { return {x}; }
inline detail::ieee_field<float> float_field(float& x) { return {x}; }
template <class T>
detail::ieee_field<std::vector<T>> float_field(std::vector<T>& x) {
  return {x};
}

} // namespace leap::msg
