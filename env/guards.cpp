#include "env/guards.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

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
    R"(\b(system|popen|fork|vfork|execl|execlp|execle|execv|execvp|execve|posix_spawn|posix_spawnp|socket|connect|bind|listen|accept|fopen|freopen|fdopen|open|openat|creat|unlink|remove|rename|mkdir|rmdir|kill|raise|ptrace|dlopen|syscall|chdir|setenv|putenv|signal|sigaction|exit|_exit|_Exit|abort|atexit|getenv|sleep|usleep|nanosleep)\s*\()");
  static const std::regex streams(
    R"(\bstd\s*::\s*(ofstream|ifstream|fstream|filesystem|thread|system)\b|#\s*include\s*<(fstream|filesystem|thread|sys/socket\.h|netinet/in\.h|arpa/inet\.h|dlfcn\.h|sys/ptrace\.h|spawn\.h|signal\.h|csignal)>)");
  std::smatch m;
  if (std::regex_search(code, m, calls)) {
    auto pos = static_cast<std::size_t>(m.position(0));
    // Member calls (x.open(...), obj->exit(...)) and definitions in namespaces are not the libc call.
    std::size_t b = pos;
    while (b > 0 && std::isspace(static_cast<unsigned char>(code[b - 1])))
      --b;
    bool member = b > 0 && (code[b - 1] == '.' || (b > 1 && code[b - 1] == '>' && code[b - 2] == '-'));
    if (!member) {
      r.ok = false;
      r.line = line_of(code, pos);
      r.reason = "calls '" + m.str(1) + "' on line " + std::to_string(r.line)
                 + ": candidates may not start processes, touch files or the network, send "
                   "signals, read the environment, sleep or end the process";
      return r;
    }
  }
  if (std::regex_search(code, m, streams)) {
    r.ok = false;
    r.line = line_of(code, static_cast<std::size_t>(m.position(0)));
    r.reason = "uses '" + m.str(0) + "' on line " + std::to_string(r.line)
               + ": file, thread, signal and network APIs are not allowed in candidates";
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
