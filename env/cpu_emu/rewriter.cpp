// Implementation of leap::emu::rewrite_cuda_source: a small C++ lexer (comments, literals, raw
// strings, pp-numbers, header names), a scan for unsupported CUDA features, and token-level
// edits for launches and shared memory that keep every line in place. Pure, thread-safe.
#include "env/cpu_emu/rewriter.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace leap::emu {
namespace {

enum class tk { ident, number, punct, literal, header_name };

struct token {
  tk kind;
  std::size_t pos;
  std::size_t len;
  int line;
  bool in_directive;
};

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

class lexer {
 public:
  explicit lexer(std::string_view s) : s_(s) {}

  std::vector<token> run() {
    std::vector<token> out;
    bool line_start = true;    // only whitespace since the last newline
    bool in_directive = false;
    int directive_tokens = 0;  // tokens of the current directive so far
    bool want_header = false;  // after #include
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
        line_start = true;
        in_directive = false;
        want_header = false;
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || (s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n'))) {
        i_ += s_[i_ + 1] == '\n' ? 2 : 3;
        ++line_;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') {
          if (s_[i_] == '\\' && peek(1) == '\n') { ++line_; ++i_; }
          ++i_;
        }
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        std::size_t end = s_.find("*/", i_ + 2);
        if (end == std::string_view::npos) end = s_.size(); else end += 2;
        count_lines(i_, end);
        i_ = end;
        continue;
      }
      const std::size_t start = i_;
      const int line = line_;
      if (want_header && c == '<') {
        std::size_t end = s_.find_first_of(">\n", i_ + 1);
        if (end == std::string_view::npos || s_[end] == '\n') end = i_; else ++end;
        if (end > i_) {
          i_ = end;
          out.push_back({tk::header_name, start, end - start, line, true});
          want_header = false;
          continue;
        }
      }
      tk kind = tk::punct;
      if (ident_start(c)) {
        while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
        std::string_view id = s_.substr(start, i_ - start);
        if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && literal_prefix(id)) {
          if (id.back() == 'R' && s_[i_] == '"') raw_string(); else quoted(s_[i_]);
          kind = tk::literal;
        } else {
          kind = tk::ident;
        }
      } else if (digit(c) || (c == '.' && digit(peek(1)))) {
        number();
        kind = tk::number;
      } else if (c == '"' || c == '\'') {
        quoted(c);
        kind = tk::literal;
      } else {
        ++i_;
      }
      if (line_start && kind == tk::punct && c == '#') {
        in_directive = true;
        directive_tokens = 0;
      }
      out.push_back({kind, start, i_ - start, line, in_directive});
      if (in_directive) {
        ++directive_tokens;
        if (directive_tokens == 2) {
          std::string_view name = s_.substr(start, i_ - start);
          want_header = name == "include" || name == "include_next";
        } else if (directive_tokens > 2) {
          want_header = false;
        }
      }
      line_start = false;
    }
    return out;
  }

 private:
  char peek(std::size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void count_lines(std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < s_.size(); ++k) line_ += s_[k] == '\n';
  }
  static bool literal_prefix(std::string_view id) {
    static const std::set<std::string_view> prefixes = {"R", "u8", "u", "U", "L", "u8R", "uR", "UR", "LR"};
    return prefixes.count(id) != 0;
  }
  void quoted(char q) {
    ++i_;
    while (i_ < s_.size() && s_[i_] != q && s_[i_] != '\n') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') ++line_;
        ++i_;
      }
      ++i_;
    }
    if (i_ < s_.size() && s_[i_] == q) ++i_;
  }
  void raw_string() {
    std::size_t open = s_.find('(', i_ + 1);
    if (open == std::string_view::npos) { quoted('"'); return; }
    std::string close = ")" + std::string(s_.substr(i_ + 1, open - i_ - 1)) + "\"";
    std::size_t end = s_.find(close, open + 1);
    end = end == std::string_view::npos ? s_.size() : end + close.size();
    count_lines(i_, end);
    i_ = end;
  }
  void number() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (peek(1) == '+' || peek(1) == '-')) {
        i_ += 2;
      } else if (ident_char(c) || c == '.') {
        ++i_;
      } else if (c == '\'' && ident_char(peek(1))) {
        i_ += 2;
      } else {
        break;
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int line_ = 1;
};

const std::set<std::string_view>& sync_identifiers() {
  static const std::set<std::string_view> ids = {
      "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp",
      "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
      "__all_sync", "__match_any_sync", "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync",
      "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"};
  return ids;
}

const std::map<std::string_view, std::string_view>& unsupported_identifiers() {
  static const std::map<std::string_view, std::string_view> ids = {
      {"asm", "inline assembly (asm)"},
      {"__asm__", "inline assembly (asm)"},
      {"__asm", "inline assembly (asm)"},
      {"wmma", "WMMA / tensor cores (nvcuda::wmma)"},
      {"nvcuda", "WMMA / tensor cores (nvcuda::wmma)"},
      {"cooperative_groups", "cooperative groups"},
      {"this_thread_block", "cooperative groups"},
      {"this_grid", "cooperative groups"},
      {"tiled_partition", "cooperative groups"},
      {"cudaLaunchCooperativeKernel", "cooperative groups"},
      {"tex1Dfetch", "textures"},
      {"tex1D", "textures"},
      {"tex2D", "textures"},
      {"tex3D", "textures"},
      {"tex2DLayered", "textures"},
      {"texCubemap", "textures"},
      {"cudaTextureObject_t", "textures"},
      {"cudaCreateTextureObject", "textures"},
      {"cudaBindTexture", "textures"},
      {"cudaSurfaceObject_t", "surfaces"},
      {"surf2Dwrite", "surfaces"},
      {"surf2Dread", "surfaces"},
      {"__half", "half precision (__half)"},
      {"__half2", "half precision (__half2)"},
      {"half2", "half precision (half2)"},
      {"__float2half", "half precision (__float2half)"},
      {"__float2half_rn", "half precision (__float2half_rn)"},
      {"__half2float", "half precision (__half2float)"},
      {"__nv_bfloat16", "bfloat16 (__nv_bfloat16)"},
      {"__nv_bfloat162", "bfloat16 (__nv_bfloat162)"},
      {"nv_bfloat16", "bfloat16 (nv_bfloat16)"},
      {"__float2bfloat16", "bfloat16 (__float2bfloat16)"},
      {"__bfloat162float", "bfloat16 (__bfloat162float)"},
      {"__nv_fp8_e4m3", "fp8 types"},
      {"__nv_fp8_e5m2", "fp8 types"},
      {"__cluster_dims__", "thread block clusters"},
      {"cudaLaunchKernelEx", "cudaLaunchKernelEx (use <<<...>>>)"},
      {"cudaLaunchKernel", "cudaLaunchKernel (use <<<...>>>)"},
      {"__pipeline_memcpy_async", "asynchronous copies (__pipeline_memcpy_async)"},
      {"memcpy_async", "asynchronous copies (memcpy_async)"},
      {"curand_init", "cuRAND device API"},
      {"curandState", "cuRAND device API"},
  };
  return ids;
}

// Unsupported headers: exact names, or prefixes ending in '/'.
std::string_view unsupported_header(std::string_view h) {
  static const std::vector<std::pair<std::string_view, std::string_view>> hs = {
      {"cuda_fp16.h", "half precision (cuda_fp16.h)"},
      {"cuda_bf16.h", "bfloat16 (cuda_bf16.h)"},
      {"cuda_fp8.h", "fp8 types (cuda_fp8.h)"},
      {"mma.h", "WMMA / tensor cores (mma.h)"},
      {"cooperative_groups.h", "cooperative groups"},
      {"cooperative_groups/", "cooperative groups"},
      {"cuda_pipeline.h", "asynchronous copies (cuda_pipeline.h)"},
      {"cuda_awbarrier.h", "asynchronous barriers (cuda_awbarrier.h)"},
      {"cuda/", "libcu++ (<cuda/...>)"},
      {"cub/", "CUB"},
      {"thrust/", "Thrust"},
      {"cublas_v2.h", "cuBLAS"},
      {"cublas.h", "cuBLAS"},
      {"cublasLt.h", "cuBLAS"},
      {"cudnn.h", "cuDNN"},
      {"cufft.h", "cuFFT"},
      {"curand.h", "cuRAND"},
      {"curand_kernel.h", "cuRAND device API"},
      {"cusparse.h", "cuSPARSE"},
      {"texture_fetch_functions.h", "textures"},
  };
  for (const auto& [name, what] : hs) {
    if (name.back() == '/' ? h.substr(0, name.size()) == name : h == name) return what;
  }
  return {};
}

struct edit {
  std::size_t begin, end;
  std::string text;
};

class rewriter {
 public:
  rewriter(std::string_view src, std::string_view filename)
      : src_(src), filename_(filename), toks_(lexer(src).run()) {}

  rewrite_output run() {
    rewrite_output out;
    scan_features();
    for (std::size_t i = 0; i < toks_.size() && errors_.empty(); ++i) {
      if (is_launch_start(i)) {
        i = rewrite_launch(i);
        ++out.launches;
      } else if (text(i) == "extern" && extern_shared(i)) {
        // handled, i moved past the declaration
      } else if (text(i) == "__shared__") {
        plain_shared(i);
      } else if (text(i) == "__noinline__") {
        edits_.push_back({toks_[i].pos, toks_[i].pos + toks_[i].len, "__attribute__((noinline))"});
      }
    }
    out.uses_sync = uses_sync_;
    if (!errors_.empty()) {
      out.error = errors_;
      return out;
    }
    out.code = prelude() + apply_edits();
    out.ok = true;
    return out;
  }

 private:
  std::string_view text(std::size_t i) const {
    return i < toks_.size() ? src_.substr(toks_[i].pos, toks_[i].len) : std::string_view{};
  }
  bool is(std::size_t i, std::string_view s) const { return i < toks_.size() && text(i) == s; }
  bool punct(std::size_t i, char c) const {
    return i < toks_.size() && toks_[i].kind == tk::punct && src_[toks_[i].pos] == c;
  }
  bool adjacent(std::size_t i) const { return i + 1 < toks_.size() && toks_[i].pos + 1 == toks_[i + 1].pos; }

  void fail(int line, const std::string& what) {
    if (!errors_.empty()) errors_ += "; ";
    errors_ += what + " at line " + std::to_string(line);
  }

  void scan_features() {
    std::set<std::string_view> reported;
    std::string found;
    for (std::size_t i = 0; i < toks_.size(); ++i) {
      const token& t = toks_[i];
      std::string_view what;
      if (t.kind == tk::ident) {
        std::string_view id = text(i);
        if (sync_identifiers().count(id)) uses_sync_ = true;
        auto it = unsupported_identifiers().find(id);
        if (it != unsupported_identifiers().end()) what = it->second;
        if (id == "texture" && punct(i + 1, '<')) what = "textures";
      } else if ((t.kind == tk::header_name || t.kind == tk::literal) && t.in_directive && i >= 1 &&
                 (is(i - 1, "include") || is(i - 1, "include_next"))) {
        std::string_view h = text(i);
        if (h.size() >= 2) what = unsupported_header(h.substr(1, h.size() - 2));
      }
      if (!what.empty() && reported.insert(what).second) {
        if (!found.empty()) found += "; ";
        found += std::string(what) + " at line " + std::to_string(t.line);
      }
    }
    if (!found.empty()) errors_ = "CUDA feature not supported by the CPU emulation: " + found;
  }

  bool is_launch_start(std::size_t i) const {
    return punct(i, '<') && punct(i + 1, '<') && punct(i + 2, '<') && adjacent(i) && adjacent(i + 1) &&
           !(i > 0 && punct(i - 1, '<') && toks_[i - 1].pos + 1 == toks_[i].pos);
  }

  // Index of the first token of the kernel expression that ends right before token `lt`.
  std::size_t kernel_name_start(std::size_t lt) {
    if (lt == 0) return toks_.size();
    std::size_t j = lt - 1;
    if (punct(j, '>')) {  // explicit template arguments
      int angle = 0, paren = 0;
      for (;; --j) {
        if (punct(j, ')') || punct(j, ']')) ++paren;
        else if (punct(j, '(') || punct(j, '[')) --paren;
        else if (paren == 0 && punct(j, '>')) ++angle;
        else if (paren == 0 && punct(j, '<')) --angle;
        if (angle == 0 || j == 0) break;
      }
      if (angle != 0 || j == 0) return toks_.size();
      --j;
    } else if (punct(j, ')')) {  // (kernel_pointer)
      int depth = 0;
      for (;; --j) {
        if (punct(j, ')')) ++depth;
        else if (punct(j, '(')) --depth;
        if (depth == 0 || j == 0) break;
      }
      return depth == 0 ? j : toks_.size();
    }
    if (toks_[j].kind != tk::ident) return toks_.size();
    // qualified names: ns::K, ::K, obj.K is not a kernel
    while (j >= 2 && punct(j - 1, ':') && punct(j - 2, ':')) {
      if (j >= 3 && toks_[j - 3].kind == tk::ident) j -= 3;
      else { j -= 2; break; }
    }
    return j;
  }

  // Index of the matching closer for the opener at `i` ((, [, {), or toks_.size().
  std::size_t match_forward(std::size_t i) const {
    int depth = 0;
    for (std::size_t j = i; j < toks_.size(); ++j) {
      if (punct(j, '(') || punct(j, '[') || punct(j, '{')) ++depth;
      else if (punct(j, ')') || punct(j, ']') || punct(j, '}')) {
        if (--depth == 0) return j;
      }
    }
    return toks_.size();
  }

  std::size_t rewrite_launch(std::size_t lt) {
    const int line = toks_[lt].line;
    std::size_t name_begin = kernel_name_start(lt);
    if (name_begin >= toks_.size()) {
      fail(line, "cannot parse the kernel name of a <<<...>>> launch");
      return toks_.size();
    }
    // configuration: up to `>>>` at bracket depth 0
    std::size_t j = lt + 3, cfg_end = toks_.size();
    int depth = 0;
    for (; j < toks_.size(); ++j) {
      if (punct(j, '(') || punct(j, '[') || punct(j, '{')) ++depth;
      else if (punct(j, ')') || punct(j, ']') || punct(j, '}')) --depth;
      else if (depth == 0 && punct(j, '>') && punct(j + 1, '>') && punct(j + 2, '>') && adjacent(j) && adjacent(j + 1)) {
        cfg_end = j;
        break;
      }
      if (depth < 0 || punct(j, ';')) break;
    }
    if (cfg_end >= toks_.size() || cfg_end == lt + 3) {
      fail(line, "cannot parse the <<<...>>> configuration of a kernel launch");
      return toks_.size();
    }
    std::size_t open = cfg_end + 3;
    if (!punct(open, '(')) {
      fail(line, "expected '(' after <<<...>>>");
      return toks_.size();
    }
    std::size_t close = match_forward(open);
    if (close >= toks_.size()) {
      fail(line, "unbalanced parentheses in kernel launch arguments");
      return toks_.size();
    }
    const bool directive = toks_[lt].in_directive;
    const std::size_t region_begin = toks_[name_begin].pos;
    const std::size_t region_end = toks_[close].pos + 1;
    std::string name = flatten(src_.substr(region_begin, toks_[lt].pos - region_begin));
    std::string_view cfg = src_.substr(toks_[lt + 2].pos + 1, toks_[cfg_end].pos - toks_[lt + 2].pos - 1);
    std::string_view args = src_.substr(toks_[open].pos + 1, toks_[close].pos - toks_[open].pos - 1);
    std::string label;
    for (char c : name)
      if (c != ' ' || (!label.empty() && label.back() != ' ')) label += (c == '"' || c == '\\') ? '_' : c;
    while (!label.empty() && label.back() == ' ') label.pop_back();
    std::string out = "::leap_emu::launch_kernel(\"" + label +
                      "\", LEAP_EMU_TU_USES_SYNC, ::leap_emu::make_launch_config(" + std::string(cfg) +
                      "), [&](auto&... leap_emu_args) { " + name + "(leap_emu_args...); }";
    out += close > open + 1 ? ", " : "";
    out += std::string(args) + ")";
    pad_lines(out, src_.substr(region_begin, region_end - region_begin), directive);
    edits_.push_back({region_begin, region_end, std::move(out)});
    return close;
  }

  // Replaces newlines (and line continuations) by spaces.
  static std::string flatten(std::string_view s) {
    std::string r;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (s[k] == '\\' && k + 1 < s.size() && s[k + 1] == '\n') { r += "  "; ++k; continue; }
      r += (s[k] == '\n' || s[k] == '\r') ? ' ' : s[k];
    }
    return r;
  }
  static int newlines(std::string_view s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
  // Appends the newlines `original` had and `out` lacks, so later lines keep their numbers.
  static void pad_lines(std::string& out, std::string_view original, bool directive) {
    for (int k = newlines(out); k < newlines(original); ++k) out += directive ? "\\\n" : "\n";
  }

  // Skips GNU/CUDA alignment attributes starting at token j; returns the first other token.
  std::size_t skip_attributes(std::size_t j) const {
    for (;;) {
      if ((is(j, "__align__") || is(j, "alignas") || is(j, "__attribute__") || is(j, "__builtin_align__")) &&
          punct(j + 1, '(')) {
        j = match_forward(j + 1) + 1;
      } else if (punct(j, '[') && punct(j + 1, '[')) {
        j = match_forward(j) + 1;
      } else {
        return j;
      }
    }
  }

  // `extern [attrs] __shared__ [attrs] T name[] [attrs];` -> pointer to the dynamic buffer.
  bool extern_shared(std::size_t& i) {
    std::size_t j = skip_attributes(i + 1);
    if (!is(j, "__shared__")) return false;
    const int line = toks_[i].line;
    std::size_t semi = j;
    while (semi < toks_.size() && !punct(semi, ';')) ++semi;
    std::string type;
    std::size_t k = skip_attributes(j + 1);
    std::size_t name = toks_.size();
    for (; k < semi; k = skip_attributes(k + 1)) {
      if (punct(k, '[')) break;
      if (k + 1 < semi && punct(k + 1, '[') && toks_[k].kind == tk::ident) {
        name = k;
        break;
      }
      if (!type.empty()) type += ' ';
      type += std::string(text(k));
    }
    if (name >= toks_.size() || type.empty() || !punct(name + 2, ']') || skip_attributes(name + 3) != semi) {
      fail(line, "unsupported form of an extern __shared__ declaration (expected `extern __shared__ T name[];`)");
      i = semi;
      return true;
    }
    const std::size_t begin = toks_[i].pos, end = toks_[semi].pos + 1;
    std::string out = "static thread_local " + type + "* const " + std::string(text(name)) + " = static_cast<" +
                      type + "*>(::leap_emu::detail::dynamic_smem());";
    pad_lines(out, src_.substr(begin, end - begin), toks_[i].in_directive);
    edits_.push_back({begin, end, std::move(out)});
    i = semi;
    return true;
  }

  void plain_shared(std::size_t i) {
    const bool has_static = (i > 0 && is(i - 1, "static")) || is(i + 1, "static");
    edits_.push_back({toks_[i].pos, toks_[i].pos + toks_[i].len, has_static ? "thread_local" : "static thread_local"});
  }

  std::string prelude() const {
    std::string f;
    for (char c : filename_) {
      if (c == '"' || c == '\\') f += '\\';
      f += c == '\n' ? ' ' : c;
    }
    return std::string("#define LEAP_EMU_TU_USES_SYNC ") + (uses_sync_ ? "1" : "0") +
           "\n#include <cuda_runtime.h>\n#line 1 \"" + f + "\"\n";
  }

  std::string apply_edits() {
    std::sort(edits_.begin(), edits_.end(), [](const edit& a, const edit& b) { return a.begin < b.begin; });
    std::string out;
    out.reserve(src_.size() + edits_.size() * 64);
    std::size_t at = 0;
    for (const edit& e : edits_) {
      if (e.begin < at) continue;  // overlapping edit (cannot happen for well-formed input)
      out.append(src_.substr(at, e.begin - at));
      out += e.text;
      at = e.end;
    }
    out.append(src_.substr(at));
    return out;
  }

  std::string_view src_;
  std::string_view filename_;
  std::vector<token> toks_;
  std::vector<edit> edits_;
  std::string errors_;
  bool uses_sync_ = false;
};

}  // namespace

rewrite_output rewrite_cuda_source(std::string_view source, std::string_view filename) {
  return rewriter(source, filename).run();
}

}  // namespace leap::emu
