// Key values: their kinds' names, TOML literals, validation against a key's descriptor, and the
// "did you mean" suggestions for misspelt keys.
#include "runtime/config/schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace leap::config {

std::string kind_name(value_kind k) {
  switch (k) {
  case value_kind::boolean: return "boolean";
  case value_kind::integer: return "integer";
  case value_kind::floating: return "float";
  case value_kind::string: return "string";
  case value_kind::string_list: return "string list";
  }
  return "?";
}

namespace {

std::string quote_toml(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04X", u);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
  return out;
}

std::string float_to_toml(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d); // shortest round-trip form
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string number_text(double d) {
  // Bounds are written without a trailing ".0" when integral: ">= 1", "> 0".
  if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  return float_to_toml(d);
}

} // namespace

std::string value_to_toml(const value& v) {
  struct visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return float_to_toml(d); }
    std::string operator()(const std::string& s) const { return quote_toml(s); }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string out = "[";
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (i) out += ", ";
        out += quote_toml(l[i]);
      }
      return out + "]";
    }
  };
  return std::visit(visitor{}, v);
}

leap::result<void> check_value(const key_descriptor& d, const value& v) {
  if (v.index() != static_cast<std::size_t>(d.kind))
    return make_error("internal: value of the wrong kind, expected " + kind_name(d.kind));
  auto bound_error = [&](const std::string& shown) -> std::string {
    std::string rule;
    if (d.min && d.max)
      rule = "must be " + std::string(d.min_exclusive ? "> " : ">= ") + number_text(*d.min) +
             " and <= " + number_text(*d.max);
    else if (d.min)
      rule = "must be " + std::string(d.min_exclusive ? "> " : ">= ") + number_text(*d.min);
    else
      rule = "must be <= " + number_text(*d.max);
    return shown + " is out of range (" + rule + ")";
  };
  auto out_of_bounds = [&](double x) {
    if (d.min && (d.min_exclusive ? !(x > *d.min) : !(x >= *d.min))) return true;
    if (d.max && !(x <= *d.max)) return true;
    return false;
  };
  switch (d.kind) {
  case value_kind::boolean: break;
  case value_kind::integer: {
    std::int64_t i = std::get<std::int64_t>(v);
    if (out_of_bounds(static_cast<double>(i))) return make_error(bound_error(std::to_string(i)));
    if (i < d.repr_min || i > d.repr_max)
      return make_error(std::to_string(i) + " is out of range (must be between " +
                        std::to_string(d.repr_min) + " and " + std::to_string(d.repr_max) + ")");
    break;
  }
  case value_kind::floating: {
    double x = std::get<double>(v);
    if (!std::isfinite(x)) return make_error(float_to_toml(x) + " is not a finite number");
    if (out_of_bounds(x)) return make_error(bound_error(float_to_toml(x)));
    break;
  }
  case value_kind::string: {
    const std::string& s = std::get<std::string>(v);
    if (!d.allowed.empty() && std::find(d.allowed.begin(), d.allowed.end(), s) == d.allowed.end()) {
      std::string msg = quote_toml(s) + " is not allowed; expected one of ";
      for (std::size_t i = 0; i < d.allowed.size(); ++i)
        msg += (i ? ", " : "") + quote_toml(d.allowed[i]);
      return make_error(msg);
    }
    if (d.non_empty && s.empty()) return make_error("must not be empty");
    break;
  }
  case value_kind::string_list: {
    const auto& list = std::get<std::vector<std::string>>(v);
    if (d.non_empty && list.empty())
      return make_error("must not be empty");
    for (std::size_t k = 0; k < list.size() && !d.allowed.empty(); ++k) {
      if (std::find(d.allowed.begin(), d.allowed.end(), list[k]) != d.allowed.end())
        continue;
      std::string msg = "element [" + std::to_string(k) + "]: " + quote_toml(list[k])
                        + " is not allowed; expected one of ";
      for (std::size_t i = 0; i < d.allowed.size(); ++i)
        msg += (i ? ", " : "") + quote_toml(d.allowed[i]);
      return make_error(msg);
    }
    if (d.distinct) {
      for (std::size_t k = 0; k < list.size(); ++k)
        for (std::size_t j = 0; j < k; ++j)
          if (list[j] == list[k])
            return make_error("element [" + std::to_string(k) + "]: " + quote_toml(list[k])
                              + " appears twice");
    }
    break;
  }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Suggestions.

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: insert, delete, substitute, swap two adjacent characters
  // ("wrokers" -> "workers" is one edit).
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> t(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) t[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) t[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t sub = t[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      t[i][j] = std::min({t[i - 1][j] + 1, t[i][j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        t[i][j] = std::min(t[i][j], t[i - 2][j - 2] + 1);
    }
  }
  return t[n][m];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  if (!best) return std::nullopt;
  std::size_t limit = std::max<std::size_t>(2, std::min(word.size(), best->size()) / 3);
  if (best_d == 0 || best_d > limit) return std::nullopt;
  return best;
}

} // namespace leap::config
