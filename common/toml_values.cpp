// Key values of the TOML schemas (toml_schema.hpp): their kinds' names, TOML literals, conversion
// from toml++ nodes and from command-line text, the rules on a value, and the "did you mean"
// suggestions for misspelt keys.
#include "common/toml_schema.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace leap::toml_schema {

std::string kind_name(value_kind k) {
  switch (k) {
  case value_kind::boolean: return "boolean";
  case value_kind::integer: return "integer";
  case value_kind::floating: return "float";
  case value_kind::string: return "string";
  case value_kind::string_list: return "string list";
  case value_kind::integer_list: return "integer list";
  case value_kind::float_list: return "float list";
  }
  return "?";
}

std::string expected_text(value_kind k) {
  switch (k) {
  case value_kind::boolean: return "expected a boolean (true or false)";
  case value_kind::integer: return "expected an integer";
  case value_kind::floating: return "expected a number";
  case value_kind::string: return "expected a string";
  case value_kind::string_list: return "expected an array of strings such as [\"-O3\", \"-g\"]";
  case value_kind::integer_list: return "expected an array of integers such as [1, 2]";
  case value_kind::float_list: return "expected an array of numbers such as [0.5, 1]";
  }
  return "expected ?";
}

std::string expected_text(const key_rule& d) {
  std::string out = expected_text(d.kind);
  if (d.alternative) out += " or " + expected_text(d.alternative->kind).substr(9); // "expected "
  return out;
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

template <class T>
std::string list_to_toml(const std::vector<T>& l) {
  std::string out = "[";
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (i) out += ", ";
    out += value_to_toml(value(l[i]));
  }
  return out + "]";
}

// The element kind of a list kind (the kind itself for scalars).
value_kind element_kind(value_kind k) {
  switch (k) {
  case value_kind::string_list: return value_kind::string;
  case value_kind::integer_list: return value_kind::integer;
  case value_kind::float_list: return value_kind::floating;
  default: return k;
  }
}

bool is_list(value_kind k) { return element_kind(k) != k; }

// One scalar node as `k` (a scalar kind), or nullopt when it holds another type.
std::optional<value> convert_scalar(value_kind k, const toml::node& n) {
  switch (k) {
  case value_kind::boolean:
    if (auto b = n.value_exact<bool>()) return value(*b);
    break;
  case value_kind::integer:
    if (n.is_integer()) return value(*n.value_exact<std::int64_t>());
    break;
  case value_kind::floating:
    if (n.is_floating_point()) return value(*n.value_exact<double>());
    if (n.is_integer()) return value(static_cast<double>(*n.value_exact<std::int64_t>()));
    break;
  case value_kind::string:
    if (n.is_string()) return value(std::string(*n.value_exact<std::string>()));
    break;
  default: break;
  }
  return std::nullopt;
}

std::string element_prefix(std::size_t i) { return "element [" + std::to_string(i) + "]: "; }

std::string allowed_text(const key_rule& d) {
  std::string out;
  for (std::size_t i = 0; i < d.allowed.size(); ++i)
    out += (i ? ", " : "") + quote_toml(d.allowed[i]);
  return out;
}

// "at least 1", "greater than 0 and at most 1", ... ("" when the rule has no bounds).
std::string bounds_text(const key_rule& d) {
  std::string low;
  if (d.min) low = (d.min_exclusive ? "greater than " : "at least ") + number_text(*d.min);
  if (d.min && d.max && !d.min_exclusive)
    return "between " + number_text(*d.min) + " and " + number_text(*d.max);
  if (d.max) return (low.empty() ? "" : low + " and ") + "at most " + number_text(*d.max);
  return low;
}

bool out_of_bounds(const key_rule& d, double x) {
  if (d.min && (d.min_exclusive ? !(x > *d.min) : !(x >= *d.min))) return true;
  return d.max && !(x <= *d.max);
}

// The rules on one scalar (a key's value or a list's element); "" = fine.
std::string check_scalar(const key_rule& d, const value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    if (out_of_bounds(d, static_cast<double>(*i)))
      return "must be " + bounds_text(d) + " (got " + std::to_string(*i) + ")";
    if (*i < d.repr_min || *i > d.repr_max)
      return "must be between " + std::to_string(d.repr_min) + " and " + std::to_string(d.repr_max)
             + " (got " + std::to_string(*i) + ")";
  } else if (const auto* x = std::get_if<double>(&v)) {
    if (!std::isfinite(*x)) return "must be a finite number (got " + float_to_toml(*x) + ")";
    if (out_of_bounds(d, *x))
      return "must be " + bounds_text(d) + " (got " + float_to_toml(*x) + ")";
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    if (!d.allowed.empty() && std::find(d.allowed.begin(), d.allowed.end(), *s) == d.allowed.end())
      return "must be one of " + allowed_text(d) + " (got " + quote_toml(*s) + ")";
    if (d.non_empty && s->empty() && !is_list(d.kind)) return "must not be empty";
  }
  return {};
}

template <class T>
std::optional<value_issue> check_list(const key_rule& d, const std::vector<T>& list) {
  if (d.non_empty && list.empty()) return value_issue{"must not be empty", std::nullopt};
  for (std::size_t k = 0; k < list.size(); ++k)
    if (auto bad = check_scalar(d, value(list[k])); !bad.empty())
      return value_issue{element_prefix(k) + bad, k};
  if (d.distinct)
    for (std::size_t k = 0; k < list.size(); ++k)
      for (std::size_t j = 0; j < k; ++j)
        if (list[j] == list[k])
          return value_issue{
              element_prefix(k) + value_to_toml(value(list[k])) + " is listed twice", k};
  return std::nullopt;
}

} // namespace

std::string number_text(double d) {
  if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  return float_to_toml(d);
}

std::string value_to_toml(const value& v) {
  struct visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return float_to_toml(d); }
    std::string operator()(const std::string& s) const { return quote_toml(s); }
    std::string operator()(const std::vector<std::string>& l) const { return list_to_toml(l); }
    std::string operator()(const std::vector<std::int64_t>& l) const { return list_to_toml(l); }
    std::string operator()(const std::vector<double>& l) const { return list_to_toml(l); }
  };
  return std::visit(visitor{}, v);
}

std::string describe_node(const toml::node& n) {
  switch (n.type()) {
  case toml::node_type::string:
    return "a string (" + quote_toml(*n.value_exact<std::string>()) + ")";
  case toml::node_type::integer:
    return "an integer (" + std::to_string(*n.value_exact<std::int64_t>()) + ")";
  case toml::node_type::floating_point:
    return "a float (" + float_to_toml(*n.value_exact<double>()) + ")";
  case toml::node_type::boolean:
    return std::string("a boolean (") + (*n.value_exact<bool>() ? "true" : "false") + ")";
  case toml::node_type::array: return "an array";
  case toml::node_type::table: return "a table";
  case toml::node_type::date: return "a date";
  case toml::node_type::time: return "a time";
  case toml::node_type::date_time: return "a date-time";
  case toml::node_type::none: break;
  }
  return "nothing";
}

std::variant<value, value_issue> convert(const key_rule& d, const toml::node& n) {
  // A node of the alternative's shape (a scalar for a list, a list for a scalar) is its.
  if (d.alternative && is_list(d.alternative->kind) == n.is_array() &&
      is_list(d.kind) != n.is_array()) {
    auto c = convert(*d.alternative, n);
    if (std::holds_alternative<value>(c) || n.is_array()) return c; // an element's own issue
    return value_issue{expected_text(d) + ", got " + describe_node(n), std::nullopt};
  }
  if (!is_list(d.kind)) {
    if (auto v = convert_scalar(d.kind, n)) return *v;
    if (d.alternative)
      if (auto v = convert_scalar(d.alternative->kind, n)) return *v;
    return value_issue{expected_text(d) + ", got " + describe_node(n), std::nullopt};
  }
  const toml::array* arr = n.as_array();
  if (!arr) return value_issue{expected_text(d) + ", got " + describe_node(n), std::nullopt};
  const value_kind ek = element_kind(d.kind);
  std::vector<value> elements;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    auto v = convert_scalar(ek, *arr->get(i));
    if (!v)
      return value_issue{
          element_prefix(i) + expected_text(ek) + ", got " + describe_node(*arr->get(i)), i};
    elements.push_back(std::move(*v));
  }
  auto collect = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> out;
    for (auto& e : elements) out.push_back(std::get<T>(e));
    return value(std::move(out));
  };
  if (ek == value_kind::string) return collect(std::string());
  if (ek == value_kind::integer) return collect(std::int64_t());
  return collect(double());
}

std::optional<value_issue> check_value(const key_rule& d, const value& v) {
  if (d.alternative && v.index() == static_cast<std::size_t>(d.alternative->kind))
    return check_value(*d.alternative, v);
  if (v.index() != static_cast<std::size_t>(d.kind))
    return value_issue{"internal: a value of the wrong kind, expected " + kind_name(d.kind),
                       std::nullopt};
  if (const auto* l = std::get_if<std::vector<std::string>>(&v)) return check_list(d, *l);
  if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) return check_list(d, *l);
  if (const auto* l = std::get_if<std::vector<double>>(&v)) return check_list(d, *l);
  if (auto bad = check_scalar(d, v); !bad.empty()) return value_issue{bad, std::nullopt};
  return std::nullopt;
}

leap::result<value> parse_value_text(const key_rule& d, std::string_view raw) {
  std::string_view text = trim(raw);
  const bool quoted = !text.empty() && (text.front() == '"' || text.front() == '\'');
  if (d.kind == value_kind::string && !quoted)
    return value(std::string(text)); // unquoted string: taken literally
  const std::string shown = text.empty() ? std::string("nothing") : "'" + std::string(text) + "'";
  if (is_list(d.kind) && (text.empty() || text.front() != '['))
    return make_error(expected_text(d.kind) + ", got " + shown);
  std::string parse_error;
  toml::table doc;
#if TOML_EXCEPTIONS
  try {
    doc = toml::parse("v = " + std::string(text));
  } catch (const toml::parse_error& e) {
    parse_error = std::string(e.description());
  }
#else
  toml::parse_result r = toml::parse("v = " + std::string(text));
  if (r) doc = std::move(r).table();
  else parse_error = std::string(r.error().description());
#endif
  if (!parse_error.empty() || doc.size() != 1 || !doc.contains("v")) {
    bool texty = d.kind == value_kind::string || is_list(d.kind);
    return make_error(expected_text(d.kind) + ", got " + shown +
                      (texty && !parse_error.empty() ? " (" + parse_error + ")" : std::string()));
  }
  auto c = convert(d, *doc.get("v"));
  if (auto* issue = std::get_if<value_issue>(&c)) return make_error(issue->detail);
  return std::get<value>(std::move(c));
}

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

} // namespace leap::toml_schema
