// Reading a task: its task.toml (validated key by key, every error naming the file, line and key)
// and its reference source, into a task_spec (env/task.hpp).
#include "env/task.hpp"

#include "common/fs.hpp"
#include "env/shape_expr.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace leap::env {

namespace {

std::string where(const std::string& file, const toml::source_region& src) {
  std::ostringstream os;
  os << file << ":" << src.begin.line << ":" << src.begin.column;
  return os.str();
}

error key_error(const std::string& file, const toml::node& n, const std::string& key,
                const std::string& what) {
  return make_error(where(file, n.source()) + ": " + key + ": " + what);
}

result<init_dist> parse_init(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ' ' && c != '\t')
      s += c;
  init_dist d;
  if (s == "zeros") {
    d.kind = init_dist::zeros;
    return d;
  }
  if (s == "ones") {
    d.kind = init_dist::ones;
    return d;
  }
  auto open = s.find('(');
  if (open == std::string::npos || s.back() != ')')
    return make_error("expected one of uniform(lo, hi), normal(mean, std), randint(lo, hi), "
                      "constant(v), zeros, ones; got \"" + std::string(text) + "\"");
  auto fn = s.substr(0, open);
  auto inner = s.substr(open + 1, s.size() - open - 2);
  std::vector<double> nums;
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      std::size_t used = 0;
      nums.push_back(std::stod(item, &used));
      if (used != item.size())
        throw std::invalid_argument(item);
    } catch (const std::exception&) {
      return make_error("\"" + item + "\" is not a number in \"" + std::string(text) + "\"");
    }
  }
  auto want = [&](std::size_t n) -> result<init_dist> {
    if (nums.size() != n)
      return make_error(fn + "(...) takes " + std::to_string(n) + " argument(s) in \""
                        + std::string(text) + "\"");
    d.a = nums[0];
    d.b = n > 1 ? nums[1] : 0;
    return d;
  };
  if (fn == "uniform") {
    d.kind = init_dist::uniform;
    auto r = want(2);
    if (r && !(d.a < d.b))
      return make_error("uniform(lo, hi) needs lo < hi");
    return r;
  }
  if (fn == "normal") {
    d.kind = init_dist::normal;
    auto r = want(2);
    if (r && !(d.b > 0))
      return make_error("normal(mean, std) needs std > 0");
    return r;
  }
  if (fn == "randint") {
    d.kind = init_dist::randint;
    auto r = want(2);
    if (r && !(d.a <= d.b))
      return make_error("randint(lo, hi) needs lo <= hi");
    return r;
  }
  if (fn == "constant") {
    d.kind = init_dist::constant;
    return want(1);
  }
  return make_error("unknown distribution '" + fn + "'");
}

result<void> check_keys(const std::string& file, const toml::table& t, const std::string& prefix,
                        const std::set<std::string>& known) {
  for (auto&& [k, v] : t) {
    std::string key(k.str());
    if (!known.count(key)) {
      std::string list;
      for (auto& s : known)
        list += (list.empty() ? "" : ", ") + s;
      return key_error(file, v, prefix + key, "unknown key (known: " + list + ")");
    }
  }
  return {};
}

template <class T>
result<T> get(const std::string& file, const toml::table& t, const toml::node& owner,
              const std::string& key, const std::string& full, const char* type_name) {
  auto n = t.get(key);
  if (!n)
    return make_error(where(file, owner.source()) + ": " + full + ": missing required key");
  auto v = n->value<T>();
  if (!v)
    return key_error(file, *n, full, std::string("expected ") + type_name);
  return *v;
}

// load_task and parse_task: `reference` given = a task held in memory (spec_path as given, the
// reference not read from disk, no directory-name check).
result<task_spec> parse_task_impl(const std::string& path, const result<std::string>& text,
                                  const std::string* reference) {
  toml::table root;
  try {
    root = toml::parse(*text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << path << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
       << e.description();
    return make_error(os.str());
  }
  auto r = check_keys(path, root, "",
                      {"name", "level", "split", "category", "description", "signature", "reference",
                       "allowed_libraries", "atol", "rtol", "args", "sizes"});
  if (!r)
    return r.err();
  task_spec t;
  t.spec_path = reference ? path : fs::absolute(path).lexically_normal().string();
  t.spec_source = *text;
  auto name = get<std::string>(path, root, root, "name", "name", "a string");
  if (!name)
    return name.err();
  t.name = *name;
  auto level = get<int64_t>(path, root, root, "level", "level", "an integer");
  if (!level)
    return level.err();
  if (*level < 1 || *level > 3)
    return key_error(path, *root.get("level"), "level", "must be 1, 2 or 3");
  t.level = static_cast<int>(*level);
  auto split = get<std::string>(path, root, root, "split", "split", "a string (train or eval)");
  if (!split)
    return split.err();
  auto sp = parse_task_split(*split);
  if (!sp)
    return key_error(path, *root.get("split"), "split", sp.message());
  t.split = *sp;
  auto category = get<std::string>(path, root, root, "category", "category", "a string");
  if (!category)
    return category.err();
  auto cat = parse_task_category(*category);
  if (!cat)
    return key_error(path, *root.get("category"), "category", cat.message());
  t.category = *cat;
  auto desc = get<std::string>(path, root, root, "description", "description", "a string");
  if (!desc)
    return desc.err();
  t.description = *desc;
  auto sig = get<std::string>(path, root, root, "signature", "signature", "a string");
  if (!sig)
    return sig.err();
  t.signature = *sig;
  auto params = parse_signature(t.signature);
  if (!params)
    return key_error(path, *root.get("signature"), "signature", params.message());
  auto ref = get<std::string>(path, root, root, "reference", "reference", "a string");
  if (!ref)
    return ref.err();
  t.reference_path = (fs::path(t.spec_path).parent_path() / *ref).lexically_normal().string();
  auto src = reference ? result<std::string>(*reference) : read_file(t.reference_path);
  if (!src)
    return key_error(path, *root.get("reference"), "reference", src.message());
  t.reference_source = *src;
  for (const char* tol : {"atol", "rtol"}) {
    if (auto n = root.get(tol)) {
      auto v = n->value<double>();
      if (!v || *v < 0)
        return key_error(path, *n, tol, "expected a number >= 0");
      (std::string(tol) == "atol" ? t.atol : t.rtol) = *v;
    }
  }
  if (auto n = root.get("allowed_libraries")) {
    auto arr = n->as_array();
    if (!arr)
      return key_error(path, *n, "allowed_libraries", "expected an array of strings");
    for (auto& e : *arr) {
      auto s = e.value<std::string>();
      static const std::set<std::string> libs{"cublas", "cudnn", "thrust", "cub"};
      if (!s || !libs.count(*s))
        return key_error(path, e, "allowed_libraries",
                         "entries must be \"cublas\", \"cudnn\", \"thrust\" or \"cub\"");
      t.allowed_libraries.push_back(*s);
    }
  }
  // [[args]]
  auto args_node = root.get("args");
  if (!args_node || !args_node->as_array())
    return make_error(path + ":1:1: args: missing [[args]] tables (one per signature parameter)");
  auto& args = *args_node->as_array();
  if (args.size() != params->size())
    return key_error(path, *args_node, "args",
                     "the signature has " + std::to_string(params->size())
                       + " parameters but there are " + std::to_string(args.size())
                       + " [[args]] entries");
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto tab = args[i].as_table();
    std::string pfx = "args[" + std::to_string(i) + "].";
    if (!tab)
      return key_error(path, args[i], "args[" + std::to_string(i) + "]", "expected a table");
    const auto& p = (*params)[i];
    auto ok = check_keys(path, *tab, pfx,
                         p.is_pointer ? std::set<std::string>{"name", "shape", "role", "init"}
                                      : std::set<std::string>{"name"});
    if (!ok)
      return ok.err();
    auto an = get<std::string>(path, *tab, args[i], "name", pfx + "name", "a string");
    if (!an)
      return an.err();
    if (*an != p.name)
      return key_error(path, *tab->get("name"), pfx + "name",
                       "is '" + *an + "' but parameter " + std::to_string(i + 1)
                         + " of the signature is '" + p.name + "'");
    task_arg a;
    a.p = p;
    if (p.is_pointer) {
      auto shape = get<std::string>(path, *tab, args[i], "shape", pfx + "shape", "a string");
      if (!shape)
        return shape.err();
      a.shape = *shape;
      auto role = get<std::string>(path, *tab, args[i], "role", pfx + "role", "a string");
      if (!role)
        return role.err();
      if (*role == "input")
        a.role = arg_role::input;
      else if (*role == "output")
        a.role = arg_role::output;
      else if (*role == "inout")
        a.role = arg_role::inout;
      else
        return key_error(path, *tab->get("role"), pfx + "role",
                         "must be \"input\", \"output\" or \"inout\"");
      if ((a.role == arg_role::output || a.role == arg_role::inout) && p.is_const)
        return key_error(path, *tab->get("role"), pfx + "role",
                         "a const pointer cannot be an " + *role);
      if (a.role == arg_role::input && !p.is_const)
        return key_error(path, *tab->get("role"), pfx + "role",
                         "an input must be a const pointer in the signature");
      if (a.role != arg_role::output) {
        auto init = get<std::string>(path, *tab, args[i], "init", pfx + "init", "a string");
        if (!init)
          return init.err();
        auto d = parse_init(*init);
        if (!d)
          return key_error(path, *tab->get("init"), pfx + "init", d.message());
        if (d->kind == init_dist::randint && p.kind != scalar_kind::i32)
          return key_error(path, *tab->get("init"), pfx + "init",
                           "randint is for int buffers");
        a.init = *d;
      } else if (tab->get("init")) {
        return key_error(path, *tab->get("init"), pfx + "init",
                         "an output has no init (outputs are poisoned before every run)");
      }
    } else {
      a.role = arg_role::size;
    }
    t.args.push_back(a);
  }
  // [[sizes]]
  auto sizes_node = root.get("sizes");
  if (!sizes_node || !sizes_node->as_array() || sizes_node->as_array()->size() < 2)
    return make_error(path + ":1:1: sizes: at least two [[sizes]] tables are required");
  std::set<std::string> int_names;
  for (auto& a : t.args)
    if (!a.p.is_pointer)
      int_names.insert(a.p.name);
  auto& sizes = *sizes_node->as_array();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto tab = sizes[i].as_table();
    std::string pfx = "sizes[" + std::to_string(i) + "].";
    if (!tab)
      return key_error(path, sizes[i], "sizes[" + std::to_string(i) + "]", "expected a table");
    auto ok = check_keys(path, *tab, pfx, int_names);
    if (!ok)
      return ok.err();
    size_set s;
    for (auto& n : int_names) {
      auto v = get<int64_t>(path, *tab, sizes[i], n, pfx + n, "an integer");
      if (!v)
        return v.err();
      if (*v < 0 || *v > (1LL << 31) - 1)
        return key_error(path, *tab->get(n), pfx + n, "must be in [0, 2^31)");
      s[n] = *v;
    }
    for (std::size_t ai = 0; ai < t.args.size(); ++ai) {
      if (!t.args[ai].p.is_pointer)
        continue;
      auto e = eval_shape(t.args[ai].shape, s);
      if (!e)
        return make_error(where(path, sizes[i].source()) + ": args[" + std::to_string(ai)
                          + "].shape: " + e.message());
      if (*e < 1 || *e > (1LL << 28))
        return make_error(where(path, sizes[i].source()) + ": args[" + std::to_string(ai)
                          + "].shape: \"" + t.args[ai].shape + "\" gives " + std::to_string(*e)
                          + " elements; must be in [1, 2^28]");
    }
    t.sizes.push_back(std::move(s));
  }
  bool has_output = std::any_of(t.args.begin(), t.args.end(), [](const task_arg& a) {
    return a.role == arg_role::output || a.role == arg_role::inout;
  });
  if (!has_output)
    return key_error(path, *args_node, "args", "no argument has role output or inout");
  auto dir_name = fs::path(t.spec_path).parent_path().filename().string();
  if (!reference && dir_name != t.name && fs::path(t.spec_path).filename() == "task.toml")
    return key_error(path, *root.get("name"), "name",
                     "is '" + t.name + "' but the task directory is '" + dir_name + "'");
  return t;
}

} // namespace

result<task_spec> load_task(const std::string& path) {
  auto text = read_file(path);
  if (!text)
    return text.err();
  return parse_task_impl(path, text, nullptr);
}

result<task_spec> parse_task(const std::string& spec_path, const std::string& toml_text,
                             const std::string& reference_source) {
  return parse_task_impl(spec_path, result<std::string>(toml_text), &reference_source);
}

} // namespace leap::env
