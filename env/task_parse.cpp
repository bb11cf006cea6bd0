// Reading a task: its task.toml (checked against its schema, common/toml_schema.hpp: every error
// reads "<file>:<line>:<col>: <key>: <what is wrong>") and its reference source, into a task_spec
// (env/task.hpp).
#include "env/task.hpp"

#include "common/fs.hpp"
#include "common/toml_schema.hpp"
#include "env/shape_expr.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace leap::env {

namespace {

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

using toml_schema::checked_table;
using toml_schema::diagnostics;
using toml_schema::key_path;
using toml_schema::table_schema;
using toml_schema::value_kind;

// The top level of a task.toml. [[args]] and [[sizes]] are checked one by one below: their keys
// depend on the signature.
const table_schema& task_schema() {
  static const table_schema s = [] {
    table_schema t;
    t.key("name", value_kind::string, "the task directory's name").required().non_empty();
    t.key("title", value_kind::string, "the name the prompt shows, when not the task's name").non_empty();
    t.key("level", value_kind::integer).required().at_least(1).at_most(3);
    t.key("split", value_kind::string, "train or eval").required().one_of({"train", "eval"});
    std::vector<std::string> categories;
    for (auto c : all_task_categories())
      categories.emplace_back(to_string(c));
    t.key("category", value_kind::string, "the operator category").required().one_of(categories);
    t.key("description", value_kind::string).required();
    t.key("signature", value_kind::string, "extern \"C\" void solution(...)").required();
    t.key("reference", value_kind::string, "the reference .cu, relative to task.toml").required();
    t.key("allowed_libraries", value_kind::string_list)
      .one_of({"cublas", "cudnn", "thrust", "cub"});
    t.key("atol", value_kind::floating).at_least(0);
    t.key("rtol", value_kind::floating).at_least(0);
    t.table_array("args", "one per signature parameter, in order", 0, true).open = true;
    t.table_array("sizes", "the size sets the task is checked on", 2).open = true;
    return t;
  }();
  return s;
}

// An [[args]] table: a pointer parameter's, or a size parameter's (its name only).
const table_schema& arg_schema(bool pointer) {
  static const table_schema size_arg = [] {
    table_schema t;
    t.key("name", value_kind::string, "the signature parameter's name").required();
    return t;
  }();
  static const table_schema int_arg = [] {
    table_schema t = size_arg;
    t.unknown_hint = [](std::string_view, bool) {
      return std::string("an int parameter's [[args]] table has its name only");
    };
    return t;
  }();
  static const table_schema pointer_arg = [] {
    table_schema t = size_arg;
    t.key("shape", value_kind::string, "its element count, e.g. \"M * K\"").required().non_empty();
    t.key("role", value_kind::string, "input, output or inout").required()
      .one_of({"input", "output", "inout"});
    t.key("init", value_kind::string);
    return t;
  }();
  return pointer ? pointer_arg : int_arg;
}

// One [[args]] table into `a` (its parameter `p` from the signature); problems go to `diag`.
void read_arg(const checked_table& c, std::size_t i, const param& p, task_arg& a,
              diagnostics& diag) {
  const key_path& at = c.path;
  auto name = c.get<std::string>("name");
  if (name && *name != p.name)
    diag.add(*c.node("name"), at.key("name"),
             "is '" + *name + "' but parameter " + std::to_string(i + 1) + " of the signature is '"
               + p.name + "'");
  a.p = p;
  if (!p.is_pointer) {
    a.role = arg_role::size;
    return;
  }
  a.shape = c.get<std::string>("shape").value_or("");
  auto role = c.get<std::string>("role");
  if (!role)
    return;
  a.role = *role == "input"    ? arg_role::input
           : *role == "output" ? arg_role::output
                               : arg_role::inout;
  if (a.role != arg_role::input && p.is_const)
    diag.add(*c.node("role"), at.key("role"), "a const pointer cannot be an " + *role);
  if (a.role == arg_role::input && !p.is_const)
    diag.add(*c.node("role"), at.key("role"), "an input must be a const pointer in the signature");
  auto init = c.get<std::string>("init");
  if (a.role == arg_role::output) {
    if (c.node("init"))
      diag.add(*c.node("init"), at.key("init"),
               "an output has no init (outputs are poisoned before every run)");
    return;
  }
  if (!init) {
    if (!c.node("init"))
      diag.add(c.position(), at.key("init"),
               "missing required key (inputs and inouts need one: uniform(lo, hi), normal(mean, "
               "std), randint(lo, hi), constant(v), zeros or ones)");
    return;
  }
  auto d = parse_init(*init);
  if (!d)
    diag.add(*c.node("init"), at.key("init"), d.message());
  else if (d->kind == init_dist::randint && p.kind != scalar_kind::i32)
    diag.add(*c.node("init"), at.key("init"), "randint is for int buffers");
  else
    a.init = *d;
}

// One [[sizes]] table: every size parameter, each in [0, 2^31), and every pointer argument's
// element count in [1, 2^28] under it.
void read_sizes(const checked_table& c, task_spec& t, const std::vector<checked_table>& args,
                diagnostics& diag) {
  table_schema schema;
  for (auto& a : t.args)
    if (!a.p.is_pointer)
      schema.key(a.p.name, value_kind::integer, "a size parameter of the signature").required()
        .at_least(0).at_most(2147483647);
  std::size_t before = diag.size();
  checked_table s = toml_schema::check(*c.source, schema, diag, c.path);
  if (diag.size() != before)
    return;
  size_set sizes;
  for (auto& k : s.keys)
    sizes[k.name] = std::get<std::int64_t>(k.v);
  for (std::size_t ai = 0; ai < t.args.size(); ++ai) {
    if (!t.args[ai].p.is_pointer)
      continue;
    const std::string label = args[ai].path.key("shape");
    auto e = eval_shape(t.args[ai].shape, sizes);
    if (!e)
      diag.add(*args[ai].node("shape"), label, e.message());
    else if (*e < 1 || *e > (1LL << 28))
      diag.add(c.position(), label,
               "\"" + t.args[ai].shape + "\" gives " + std::to_string(*e) + " elements under "
                 + c.path.table() + "; must be between 1 and 2^28");
  }
  t.sizes.push_back(std::move(sizes));
}

// load_task and parse_task: `reference` given = a task held in memory (spec_path as given, the
// reference not read from disk, no directory-name check).
result<task_spec> parse_task_impl(const std::string& path, const result<std::string>& text,
                                  const std::string* reference) {
  auto parsed = toml_schema::parse(*text, path);
  if (!parsed)
    return parsed.err();
  const toml::table& root = *parsed;
  diagnostics diag(path);
  checked_table c = toml_schema::check(root, task_schema(), diag);
  if (!diag.empty())
    return diag.error();
  task_spec t;
  t.spec_path = reference ? path : fs::absolute(path).lexically_normal().string();
  t.spec_source = *text;
  t.name = *c.get<std::string>("name");
  c.read("title", t.title);
  t.level = static_cast<int>(*c.get<std::int64_t>("level"));
  t.split = *parse_task_split(*c.get<std::string>("split"));
  t.category = *parse_task_category(*c.get<std::string>("category"));
  t.description = *c.get<std::string>("description");
  t.signature = *c.get<std::string>("signature");
  c.read("allowed_libraries", t.allowed_libraries);
  c.read("atol", t.atol);
  c.read("rtol", t.rtol);
  auto params = parse_signature(t.signature);
  if (!params)
    diag.add(*root.get("signature"), "signature", params.message());
  t.reference_path = (fs::path(t.spec_path).parent_path() / *c.get<std::string>("reference"))
                       .lexically_normal().string();
  auto src = reference ? result<std::string>(*reference) : read_file(t.reference_path);
  if (!src)
    diag.add(*root.get("reference"), "reference", src.message());
  else
    t.reference_source = *src;
  auto dir_name = fs::path(t.spec_path).parent_path().filename().string();
  if (!reference && dir_name != t.name && fs::path(t.spec_path).filename() == "task.toml")
    diag.add(*root.get("name"), "name",
             "is '" + t.name + "' but the task directory is '" + dir_name + "'");
  if (!params)
    return diag.error();
  // [[args]], one per signature parameter.
  const auto& args = c.array("args");
  if (args.size() != params->size()) {
    diag.add(*root.get("args"), "args",
             "the signature has " + std::to_string(params->size()) + " parameters but there are "
               + std::to_string(args.size()) + " [[args]] tables");
    return diag.error();
  }
  std::vector<checked_table> arg_tables;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const param& p = (*params)[i];
    arg_tables.push_back(toml_schema::check(*args[i].source, arg_schema(p.is_pointer), diag,
                                            args[i].path));
    task_arg a;
    read_arg(arg_tables.back(), i, p, a, diag);
    t.args.push_back(a);
  }
  bool has_output = std::any_of(t.args.begin(), t.args.end(), [](const task_arg& a) {
    return a.role == arg_role::output || a.role == arg_role::inout;
  });
  if (!has_output && diag.empty())
    diag.add(*root.get("args"), "args", "no argument has role output or inout");
  if (!diag.empty())
    return diag.error();
  // [[sizes]]: at least two.
  for (const auto& s : c.array("sizes"))
    read_sizes(s, t, arg_tables, diag);
  if (!diag.empty())
    return diag.error();
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
