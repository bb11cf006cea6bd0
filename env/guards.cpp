#include "env/guards.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <utility>

namespace leap::env {

std::string blank_comments_and_strings(std::string_view s) {
  std::string out(s);
  std::size_t i = 0, n = s.size();
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < n; ++k)
      if (out[k] != '\n')
        out[k] = ' ';
  };
  while (i < n) {
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
      auto e = s.find('\n', i);
      e = e == std::string_view::npos ? n : e;
      blank(i, e);
      i = e;
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
      auto e = s.find("*/", i + 2);
      e = e == std::string_view::npos ? n : e + 2;
      blank(i, e);
      i = e;
    } else if (s[i] == 'R' && i + 1 < n && s[i + 1] == '"'
               && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      auto open = s.find('(', i + 2);
      if (open == std::string_view::npos) {
        ++i;
        continue;
      }
      std::string delim = ")" + std::string(s.substr(i + 2, open - i - 2)) + "\"";
      auto e = s.find(delim, open);
      e = e == std::string_view::npos ? n : e + delim.size();
      blank(i + 2, e - 1);
      i = e;
    } else if (s[i] == '"' || s[i] == '\'') {
      char q = s[i];
      std::size_t k = i + 1;
      while (k < n && s[k] != q && s[k] != '\n') {
        if (s[k] == '\\')
          ++k;
        ++k;
      }
      blank(i + 1, std::min(k, n));
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

namespace {

int line_of(std::string_view s, std::size_t pos) {
  return 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<long>(pos), '\n'));
}

// Position of the '(' matching the ')' at `close` (code without comments/strings), or npos.
std::size_t open_paren_of(const std::string& code, std::size_t close) {
  int depth = 0;
  for (std::size_t k = close + 1; k-- > 0;) {
    if (code[k] == ')')
      ++depth;
    else if (code[k] == '(' && --depth == 0)
      return k;
  }
  return std::string::npos;
}

// Skips whitespace and macro line continuations backwards from `p` (exclusive); returns the
// position after the previous significant character.
std::size_t skip_back(const std::string& code, std::size_t p) {
  while (p > 0 && (std::isspace(static_cast<unsigned char>(code[p - 1])) || code[p - 1] == '\\'))
    --p;
  return p;
}

// The condition of the `if` whose branch starts right before `p` (`if (c) call` or
// `if (c) { ... call`), or empty.
std::string if_condition_before(const std::string& code, std::size_t p) {
  p = skip_back(code, p);
  if (p == 0 || code[p - 1] != ')')
    return "";
  auto open = open_paren_of(code, p - 1);
  if (open == std::string::npos)
    return "";
  auto k = skip_back(code, open);
  if (k < 2 || code.compare(k - 2, 2, "if") != 0 || (k > 2 && (std::isalnum(static_cast<unsigned char>(code[k - 3])) || code[k - 3] == '_')))
    return "";
  return code.substr(open, p - open);
}

// Whether the exit()/abort() call at `pos` sits in the branch that handles a failed CUDA call:
// the innermost `if` around it tests a CUDA status (its condition, or the enclosing function
// or macro, names cudaSuccess/cudaError/cudaGetLastError...). A cuda_check helper is the
// common case; a plain exit() is not. Either way the runtime catches a process that ends
// early (runtime_error), so this is about not rejecting ordinary code.
bool in_cuda_error_branch(const std::string& code, std::size_t pos) {
  std::string cond = if_condition_before(code, pos);
  std::size_t block = std::string::npos;  // the innermost enclosing '{'
  if (cond.empty()) {
    int depth = 0;
    for (std::size_t k = pos; k-- > 0;) {
      if (code[k] == '}')
        ++depth;
      else if (code[k] == '{' && depth-- == 0) {
        block = k;
        break;
      }
    }
    if (block == std::string::npos)
      return false;
    cond = if_condition_before(code, block);
    if (cond.empty())
      return false;
  }
  static const std::regex cuda_status(R"(\bcuda\w*|\bCU_\w+)");
  if (std::regex_search(cond, cuda_status))
    return true;
  // `if (e) exit(1);` in `void check(cudaError_t e)` or in a CUDA_CHECK macro: look at the
  // enclosing top-level function (brace depth 0) or macro definition.
  std::size_t outer = pos;  // the outermost '{' around the call
  int depth = 0, lowest = 0;
  for (std::size_t k = pos; k-- > 0;) {
    if (code[k] == '}')
      ++depth;
    else if (code[k] == '{' && --depth < lowest) {
      lowest = depth;
      outer = k;
    }
  }
  std::size_t start = outer;  // back to the end of the previous declaration
  while (start > 0 && code[start - 1] != ';' && code[start - 1] != '}')
    --start;
  static const std::regex cuda_error(R"(\bcudaError\w*|\bcudaSuccess\b|\bcudaGet\w*Error\w*|\bcudaPeekAtLastError\b)");
  return std::regex_search(code.begin() + static_cast<long>(start), code.begin() + static_cast<long>(pos), cuda_error);
}

struct library_rule {
  const char* name;
  std::regex pattern;
};

} // namespace

guard_result static_check(std::string_view source, const std::vector<std::string>& allowed) {
  guard_result r;
  std::string code = blank_comments_and_strings(source);
  // Includes keep their <...> text since only "..." literals are blanked; quoted includes are
  // checked on the raw source lines that start with #include.
  auto allowed_lib = [&](const char* lib) {
    return std::find(allowed.begin(), allowed.end(), lib) != allowed.end();
  };
  static const std::vector<library_rule> libs = {
    {"cublas", std::regex(R"(\bcublas\w*|cublas_v2\.h|cublasLt)")},
    {"cudnn", std::regex(R"(\bcudnn\w*)")},
    {"thrust", std::regex(R"(\bthrust\s*::|thrust/)")},
    {"cub", std::regex(R"(\bcub\s*::|\bcub/)")},
  };
  std::string raw(source);
  for (auto& rule : libs) {
    if (allowed_lib(rule.name))
      continue;
    std::smatch m;
    // Search the code and the raw #include lines (a quoted include's path is blanked in code).
    for (const std::string* text : {&code, &raw}) {
      std::string hay = *text;
      if (text == &raw) {
        std::string incs;
        for (std::size_t p = 0; p < raw.size();) {
          auto e = raw.find('\n', p);
          auto line = raw.substr(p, e == std::string::npos ? std::string::npos : e - p);
          auto t = line.find_first_not_of(" \t");
          incs += (t != std::string::npos && line.compare(t, 8, "#include") == 0) ? line : "";
          incs += '\n';
          if (e == std::string::npos)
            break;
          p = e + 1;
        }
        hay = incs;
      }
      if (std::regex_search(hay, m, rule.pattern)) {
        r.ok = false;
        r.line = line_of(hay, static_cast<std::size_t>(m.position(0)));
        r.reason = std::string("uses the ") + rule.name + " library ('" + m.str(0) + "' on line "
                   + std::to_string(r.line) + "), which this task does not allow: write the "
                   + "kernel yourself";
        return r;
      }
    }
  }
  static const std::regex calls(
    R"(\b(system|popen|fork|vfork|execl|execlp|execle|execv|execvp|execve|clone|posix_spawn|posix_spawnp|socket|connect|bind|listen|accept|fopen|freopen|fdopen|open|openat|creat|unlink|remove|rename|mkdir|rmdir|kill|raise|ptrace|dlopen|syscall|chdir|setenv|putenv|signal|sigaction|exit|_exit|_Exit|abort|atexit|getenv|sleep|usleep|nanosleep)\s*\()");
  static const std::regex streams(
    R"(\bstd\s*::\s*(ofstream|ifstream|fstream|filesystem|thread|jthread|async|system)\b|\b(pthread_create|thrd_create)\s*\(|#\s*include\s*<(fstream|filesystem|thread|future|pthread\.h|threads\.h|sys/socket\.h|netinet/in\.h|arpa/inet\.h|dlfcn\.h|sys/ptrace\.h|spawn\.h|signal\.h|csignal)>)");
  // Cache persistence across calls: an L2 access window (or its size limit) keeps the inputs of
  // one timed call in L2 for the next, which measures a warm cache instead of the kernel.
  static const std::regex l2_persist(
    R"(\b(cudaLimitPersistingL2CacheSize|accessPolicyWindow|cudaAccessPolicyWindow|cudaStreamAttributeAccessPolicyWindow|cudaKernelNodeAttributeAccessPolicyWindow|cudaLaunchAttributeAccessPolicyWindow|cudaAccessPropertyPersisting|cudaCtxResetPersistingL2Cache|CU_LIMIT_PERSISTING_L2_CACHE_SIZE)\b)");
  std::smatch m;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), calls); it != std::sregex_iterator(); ++it) {
    auto pos = static_cast<std::size_t>(it->position(0));
    // Member calls (x.open(...), obj->exit(...)) and definitions in namespaces are not the libc call.
    std::size_t b = pos;
    while (b > 0 && std::isspace(static_cast<unsigned char>(code[b - 1])))
      --b;
    bool member = b > 0 && (code[b - 1] == '.' || (b > 1 && code[b - 1] == '>' && code[b - 2] == '-'));
    const std::string name = (*it)[1].str();
    if (member || ((name == "exit" || name == "abort") && in_cuda_error_branch(code, pos)))
      continue;
    r.ok = false;
    r.line = line_of(code, pos);
    r.reason = "calls '" + name + "' on line " + std::to_string(r.line)
               + ": candidates may not start processes, touch files or the network, send "
                 "signals, read the environment, sleep or end the process"
               + (name == "exit" || name == "abort"
                    ? std::string(" (exit/abort is allowed only in a branch that handles a failed "
                                  "CUDA call, as in a cuda_check helper)")
                    : std::string());
    return r;
  }
  // Constructs refused wherever they stand: the match, its line, and why.
  const std::pair<const std::regex*, const char*> refused[] = {
    {&streams, "file, thread, signal and network APIs are not allowed in candidates (all work must "
               "be done when solution() returns)"},
    {&l2_persist, "persisting-L2 access windows keep data in the cache across calls, which "
                  "falsifies timing; candidates may not change cache persistence"},
  };
  for (const auto& [pattern, why] : refused)
    if (std::regex_search(code, m, *pattern)) {
      r.ok = false;
      r.line = line_of(code, static_cast<std::size_t>(m.position(0)));
      r.reason = "uses '" + m.str(0) + "' on line " + std::to_string(r.line) + ": " + why;
      return r;
    }
  static const std::regex entry(R"(\bsolution\s*\()");
  static const std::regex extern_c(R"(extern\s+"C")");
  if (!std::regex_search(code, entry) || !std::regex_search(raw, extern_c)) {
    r.ok = false;
    r.reason = "no entry point: define extern \"C\" void solution(...) with the task's exact "
               "parameter list";
    return r;
  }
  return r;
}

} // namespace leap::env
