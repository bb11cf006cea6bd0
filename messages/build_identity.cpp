#include "messages/build_identity.hpp"

#include "leap/build_info.hpp"
#include "messages/type_ids.hpp"

#include <caf/meta/annotation.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace leap::msg {

namespace {

template <class T, class = void>
struct has_inspect : std::false_type {};

struct signature_inspector;

template <class T>
struct has_inspect<T, std::void_t<decltype(inspect(std::declval<signature_inspector&>(),
                                                   std::declval<T&>()))>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// Writes the types an inspect() visits, not their values: "name{field,field,...}".
struct signature_inspector {
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;
  std::string out;

  template <class... Ts>
  void operator()(Ts&&... xs) {
    (visit(xs), ...);
  }

  template <class T>
  void visit(T& x) {
    using U = std::decay_t<T>;
    if constexpr (std::is_same<U, caf::meta::type_name_t>::value) {
      out += x.value;
      out += ':';
    } else if constexpr (caf::meta::is_annotation<U>::value) {
      // load/save callbacks and formatting hints change no bytes
    } else if constexpr (has_inspect<U>::value) {
      signature_inspector inner; // a nested message or an enum's checked wrapper
      inspect(inner, x);
      out += "{" + inner.out + "},";
    } else {
      out += type_of<U>();
      out += ',';
    }
  }

  template <class U>
  std::string type_of() {
    if constexpr (std::is_same<U, bool>::value) {
      return "bool";
    } else if constexpr (std::is_integral<U>::value) {
      return (std::is_signed<U>::value ? "i" : "u") + std::to_string(8 * sizeof(U));
    } else if constexpr (std::is_floating_point<U>::value) {
      // CAF 0.17 encodes a bare float with caf::detail::pack754, which never returns on an
      // infinity (a remote reply holding one would hang) and mangles NaN and subnormals: every
      // float field travels as its bits, through msg::float_field (messages/float_inspect.hpp).
      static_assert(!std::is_floating_point<U>::value,
                    "a message field is a bare float or double: pass it as msg::float_field(x.f)");
      return {};
    } else if constexpr (std::is_same<U, std::string>::value) {
      return "str";
    } else if constexpr (is_vector<U>::value) {
      return "vec<" + type_of<typename U::value_type>() + ">";
    } else if constexpr (is_map<U>::value) {
      return "map<" + type_of<typename U::key_type>() + "," + type_of<typename U::mapped_type>()
             + ">";
    } else if constexpr (is_optional<U>::value) {
      return "opt<" + type_of<typename U::value_type>() + ">";
    } else if constexpr (std::is_enum<U>::value) {
      return "enum" + std::to_string(8 * sizeof(U));
    } else if constexpr (has_inspect<U>::value) {
      signature_inspector inner;
      U x{};
      inspect(inner, x);
      return "{" + inner.out + "}";
    } else {
      static_assert(std::is_same<U, void>::value, "a message field of a type with no signature");
      return {};
    }
  }
};

// Types with no inspect() of their own (atoms, CAF's builtins) contribute their name only.
template <caf::type_id_t Id>
void describe_one(std::string& out) {
  using T = typename caf::type_by_id<Id>::type;
  out += std::to_string(Id - caf::id_block::leap::begin) + " "
         + caf::type_name_by_id<Id>::value + " ";
  if constexpr (has_inspect<T>::value) {
    signature_inspector f;
    T x{};
    inspect(f, x);
    out += f.out;
  }
  out += "\n";
}

template <std::size_t... Is>
void describe_all(std::string& out, std::index_sequence<Is...>) {
  (describe_one<static_cast<caf::type_id_t>(caf::id_block::leap::begin + Is)>(out), ...);
}

std::string hex64(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

} // namespace

std::string message_signature() {
  std::string out;
  describe_all(out, std::make_index_sequence<caf::id_block::leap::end - caf::id_block::leap::begin>{});
  return out;
}

build_identity this_build_identity() {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : message_signature()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return {build_info::version, hex64(h)};
}

std::optional<std::string> identity_mismatch(const build_identity& ours,
                                             const build_identity& theirs) {
  if (ours.version == theirs.version && ours.messages == theirs.messages)
    return std::nullopt;
  return "leap " + theirs.version + " (messages " + theirs.messages + ") cannot talk to leap "
         + ours.version + " (messages " + ours.messages
         + "): run the same leap build on the head and every node";
}

} // namespace leap::msg
