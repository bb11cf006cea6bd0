// generate(): per task, the family's correct templates rendered as solution variants, then the
// bug mutators applied to a seeded choice of them.
#include "policy/corpus/kernel_corpus.hpp"
#include "policy/corpus/families.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace leap::corpus {

namespace {

const std::map<std::string, std::string>& families() {
  static const std::map<std::string, std::string> m{
    {"vector_add", "elementwise"},   {"relu", "elementwise"},          {"leaky_relu", "elementwise"},
    {"sigmoid", "elementwise"},      {"gelu", "elementwise"},          {"saxpy", "elementwise"},
    {"elementwise_mul", "elementwise"},
    {"softmax_rows", "rowwise"},     {"layernorm_rows", "rowwise"},    {"rmsnorm_rows", "rowwise"},
    {"row_max", "rowwise"},
    {"sum_reduce", "reduction"},     {"dot_product", "reduction"},     {"histogram", "reduction"},
    {"prefix_scan", "reduction"},    {"matvec", "reduction"},
    {"matmul", "matmul"},            {"matmul_bias_relu", "matmul"},   {"transpose", "matmul"},
    {"conv1d", "matmul"},            {"conv2d", "matmul"},             {"attention_head", "matmul"},
    // the later train tasks
    {"batched_matmul", "matmul"},    {"matmul_transposed_b", "matmul"}, {"matmul_small_k", "matmul"},
    {"attention_scores", "matmul"},  {"conv2d_strided", "matmul"},     {"conv2d_relu", "matmul"},
    {"maxpool1d", "pooling"},        {"avgpool2d", "pooling"},
    {"embedding", "indexing"},       {"scatter_add", "indexing"},
    {"layernorm_affine", "rowwise"},
    {"silu", "elementwise"},         {"softplus", "elementwise"},      {"hardswish", "elementwise"},
    {"clamp", "elementwise"},
    {"row_sum", "rowwise"},          {"row_mean", "rowwise"},          {"row_argmax", "rowwise"},
    {"cross_entropy", "rowwise"},
    {"col_sum", "columnwise"},       {"col_max", "columnwise"},        {"softmax_cols", "columnwise"},
    {"batchnorm", "columnwise"},
    {"mse_loss", "reduction"},       {"exclusive_scan", "reduction"},
  };
  return m;
}

constexpr const char* generated_family = "generated";
constexpr const char* generated_reference_name = "reference.naive";

// A generated task (env/taskgen): named gen_... and its reference rendered by the generator.
bool is_generated(const env::task_spec& t) {
  return t.name.rfind("gen_", 0) == 0 && t.reference_source.rfind("// leap-taskgen-op:", 0) == 0;
}

// The generated reference as an SFT target: without its comment lines (the first holds the
// serialised operator, which a prompt never shows) and without the math helpers it does not use
// (the generator emits all of them in every reference).
std::string reference_target(const std::string& ref) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos <= ref.size()) {
    auto eol = ref.find('\n', pos);
    if (eol == std::string::npos)
      eol = ref.size();
    lines.push_back(ref.substr(pos, eol - pos));
    pos = eol + 1;
  }
  auto uses = [&](const std::string& word) {
    std::size_t n = 0;
    for (auto& l : lines)
      for (auto p = l.find(word); p != std::string::npos; p = l.find(word, p + 1)) {
        auto end = p + word.size();
        bool left = p == 0 || !(std::isalnum(static_cast<unsigned char>(l[p - 1])) || l[p - 1] == '_');
        bool right = end >= l.size() || !(std::isalnum(static_cast<unsigned char>(l[end])) || l[end] == '_');
        n += left && right;
      }
    return n;
  };
  std::string out;
  for (auto& l : lines) {
    auto f = l.find_first_not_of(" \t");
    if (f != std::string::npos && l.compare(f, 2, "//") == 0)
      continue;
    const std::string helper = "__device__ double ";
    if (l.rfind(helper, 0) == 0) {
      auto open = l.find('(', helper.size());
      if (open != std::string::npos && uses(l.substr(helper.size(), open - helper.size())) < 2)
        continue;
    }
    out += l + "\n";
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  return out;
}

// Whether `text` names `name` as a whole word followed by `[` (an element access of the buffer).
bool indexes(const std::string& text, const std::string& name) {
  for (auto p = text.find(name + "["); p != std::string::npos; p = text.find(name + "[", p + 1))
    if (p == 0 || !(std::isalnum(static_cast<unsigned char>(text[p - 1])) || text[p - 1] == '_'))
      return true;
  return false;
}

// Bugs that act on any kernel text: a kernel's `if (X >= Y) return;` guard made off by one
// (`>`) or removed (missing_bounds); an error when the source has no such guard. The guard is
// that of the kernel writing one of the task's `outputs` (the first such kernel with a guard): a
// guard of a kernel that only fills a scratch buffer the reference allocates itself (the
// broadcast family's reduced row or column) would give a bug that nothing observes, since only the
// task's own buffers are checked past their ends. Without such a kernel, the first guard.
result<std::string> generic_bug(const std::string& src, bug_kind kind,
                                const std::vector<std::string>& outputs) {
  // The text of every __global__ function, up to the next one or the entry point.
  struct kernel_span {
    std::size_t begin, end;
  };
  std::vector<kernel_span> kernels;
  for (auto k = src.find("__global__"); k != std::string::npos;) {
    auto next = src.find("__global__", k + 1);
    auto entry = src.find("extern \"C\"", k);
    auto end = std::min(next == std::string::npos ? src.size() : next,
                        entry == std::string::npos ? src.size() : entry);
    kernels.push_back({k, end});
    k = next;
  }
  if (kernels.empty())
    return make_error("no __global__ function");
  // The position of the first guard in [begin, end), or npos.
  auto guard_in = [&](std::size_t begin, std::size_t end, std::size_t& line_len) {
    for (auto g = src.find("  if (", begin); g != std::string::npos && g < end; g = src.find("  if (", g + 1)) {
      auto eol = src.find('\n', g);
      auto line = src.substr(g, eol == std::string::npos ? std::string::npos : eol - g);
      if (line.find(" >= ") != std::string::npos && line.find(") return;") != std::string::npos) {
        line_len = line.size();
        return g;
      }
    }
    return std::string::npos;
  };
  std::size_t at = std::string::npos, len = 0;
  for (auto& k : kernels) {
    auto body = src.substr(k.begin, k.end - k.begin);
    bool writes_output = std::any_of(outputs.begin(), outputs.end(),
                                     [&](const std::string& o) { return indexes(body, o); });
    if (writes_output && (at = guard_in(k.begin, k.end, len)) != std::string::npos)
      break;
  }
  if (at == std::string::npos)
    at = guard_in(kernels.front().begin, src.size(), len);
  if (at == std::string::npos)
    return make_error("no `if (... >= ...) return;` guard");
  std::string out = src;
  if (kind == bug_kind::off_by_one)
    out.replace(at + src.substr(at, len).find(" >= "), 4, " > ");
  else
    out.erase(at, len + (at + len < src.size() ? 1 : 0));
  return out;
}

} // namespace

bool is_generated_reference(const variant& v) {
  return v.kind == variant_kind::solution && v.family == generated_family
         && v.name == generated_reference_name && v.task.rfind("gen_", 0) == 0;
}

std::vector<std::string> known_tasks() {
  std::vector<std::string> out;
  for (auto& [n, f] : families())
    out.push_back(n);
  return out;
}

std::string family_of(std::string_view task) {
  auto it = families().find(std::string(task));
  return it == families().end() ? std::string() : it->second;
}

result<std::vector<variant>> generate(const std::vector<env::task_spec>& tasks,
                                      const generate_options& opt) {
  using namespace detail;
  std::vector<variant> all;
  const std::set<std::string> bug_tasks(opt.generated_bug_tasks.begin(), opt.generated_bug_tasks.end());
  for (const auto& t : tasks) {
    if (!opt.only_tasks.empty()
        && std::find(opt.only_tasks.begin(), opt.only_tasks.end(), t.name) == opt.only_tasks.end())
      continue;
    if (t.split != env::task_split::train)
      return make_error("corpus: task '" + t.name + "' is in the eval split (held out); the corpus "
                        "only holds train-split tasks");
    if (is_generated(t)) {
      // A generated task (env/taskgen) has no hand-written family: its one correct variant is the
      // generator's naive reference (the environment labels it like any other variant), and its
      // bugs are those that act on any kernel text: typos and swapped names on the source, and
      // the bounds guard made off by one or removed.
      variant sol;
      sol.task = t.name;
      sol.family = generated_family;
      sol.strategy = "reference";
      sol.name = generated_reference_name;
      sol.source = reference_target(t.reference_source);
      rng r(opt.seed ^ fnv1a(t.name));
      std::vector<std::string> outputs;
      for (std::size_t ai = 0; ai < t.args.size(); ++ai)
        if (t.args[ai].p.is_pointer && t.is_output(ai))
          outputs.push_back(t.args[ai].p.name);
      std::vector<variant> bugs;
      const bool gets_bugs = bug_tasks.empty() || bug_tasks.count(t.name) > 0;
      for (auto kind : all_bug_kinds()) {
        if (!opt.kinds.empty() && std::find(opt.kinds.begin(), opt.kinds.end(), kind) == opt.kinds.end())
          continue;
        const bool guard = kind == bug_kind::off_by_one || kind == bug_kind::missing_bounds;
        if (!acts_on_source(kind) && !guard)
          continue;
        for (int n = 0; gets_bugs && n < std::max(0, opt.generated_bugs_per_kind); ++n) {
          auto pick = r.next();
          auto src = guard ? generic_bug(sol.source, kind, outputs) : inject_typo(sol.source, kind, pick);
          if (!src || *src == sol.source)
            break; // the kind has no spot in this kernel (or one variant only: the guard)
          variant b;
          b.task = t.name;
          b.family = sol.family;
          b.strategy = sol.strategy;
          b.kind = variant_kind::buggy;
          b.bug = kind;
          b.name = std::string("bug.") + to_string(kind) + "." + sol.name
                   + (n > 0 ? ".v" + std::to_string(n + 1) : "");
          b.source = std::move(*src);
          b.origin = sol.name;
          b.origin_source = sol.source;
          bool dup = false;
          for (auto& o : bugs)
            dup = dup || o.source == b.source;
          if (!dup)
            bugs.push_back(std::move(b));
          if (guard)
            break;
        }
      }
      all.push_back(std::move(sol));
      for (auto& v : bugs)
        all.push_back(std::move(v));
      continue;
    }
    auto fam = family_of(t.name);
    if (fam.empty())
      return make_error("corpus: no variant family for task '" + t.name + "'");
    rng r(opt.seed ^ fnv1a(t.name));
    std::vector<tmpl> tmpls;
    if (fam == "elementwise")
      tmpls = elementwise_templates(t, r);
    else if (fam == "rowwise" || fam == "columnwise" || t.name == "matvec")
      tmpls = rowwise_templates(t, r);
    else if (fam == "reduction")
      tmpls = reduction_templates(t, r);
    else if (fam == "pooling")
      tmpls = pooling_templates(t, r);
    else if (fam == "indexing")
      tmpls = indexing_templates(t, r);
    else {
      tmpls = matmul_templates(t, r);
      if (tmpls.empty())
        tmpls = matmul_more_templates(t, r);
    }
    if (tmpls.empty())
      return make_error("corpus: family " + fam + " has no templates for task '" + t.name + "'");
    if (opt.solutions_per_task > 0 && tmpls.size() > static_cast<std::size_t>(opt.solutions_per_task))
      tmpls.resize(static_cast<std::size_t>(opt.solutions_per_task));
    // Correct variants.
    std::vector<variant> sols;
    std::set<std::string> names;
    for (auto& tp : tmpls) {
      variant v;
      v.task = t.name;
      v.family = fam;
      v.strategy = tp.strategy;
      v.name = tp.strategy + "." + tp.config;
      for (int k = 2; names.count(v.name); ++k)
        v.name = tp.strategy + "." + tp.config + ".v" + std::to_string(k);
      names.insert(v.name);
      v.source = render(tp.markup);
      if (v.source.find('@') != std::string::npos || v.source.find('$') != std::string::npos)
        return make_error("corpus: template " + t.name + "/" + v.name + " left markup behind");
      sols.push_back(std::move(v));
    }
    // Buggy variants.
    std::vector<variant> bugs;
    for (auto kind : all_bug_kinds()) {
      if (!opt.kinds.empty() && std::find(opt.kinds.begin(), opt.kinds.end(), kind) == opt.kinds.end())
        continue;
      std::vector<std::size_t> eligible;
      for (std::size_t i = 0; i < tmpls.size(); ++i)
        if (acts_on_source(kind) || count_sites(tmpls[i].markup, kind) > 0)
          eligible.push_back(i);
      for (auto i : r.sample(eligible, static_cast<std::size_t>(std::max(0, opt.bugs_per_kind)))) {
        auto pick = r.next();
        result<std::string> src = acts_on_source(kind)
          ? inject_typo(sols[i].source, kind, pick)
          : mutate(tmpls[i].markup, kind,
                   static_cast<int>(pick % static_cast<std::uint64_t>(count_sites(tmpls[i].markup, kind))));
        if (!src)
          return make_error("corpus: " + t.name + "/" + sols[i].name + ": " + src.message());
        if (*src == sols[i].source)
          continue;
        variant b;
        b.task = t.name;
        b.family = fam;
        b.strategy = sols[i].strategy;
        b.kind = variant_kind::buggy;
        b.bug = kind;
        b.name = std::string("bug.") + to_string(kind) + "." + sols[i].name;
        b.source = std::move(*src);
        b.origin = sols[i].name;
        b.origin_source = sols[i].source;
        bugs.push_back(std::move(b));
      }
    }
    for (auto& v : sols)
      all.push_back(std::move(v));
    for (auto& v : bugs)
      all.push_back(std::move(v));
  }
  return all;
}

} // namespace leap::corpus
