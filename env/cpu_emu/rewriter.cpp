// Implementation of leap::emu::rewrite_cuda_source: a small C++ lexer (comments, literals, raw
// strings, pp-numbers, header names), a scan for unsupported CUDA features, and token-level
// edits for launches and shared memory that keep every line in place. Pure, thread-safe.
#include "env/cpu_emu/rewriter.hpp"

#include "env/cpu_emu/conditionals.hpp"
#include "env/cpu_emu/lexer.hpp"
#include "env/cpu_emu/ptx_rewrite.hpp"
#include "env/cpu_emu/volatile_rewrite.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace leap::emu {
namespace {

const std::set<std::string_view>& sync_identifiers() {
  static const std::set<std::string_view> ids = {
      "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp",
      "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
      "__all_sync", "__match_any_sync", "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync",
      "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
      // the lanes that reach a call site together: only fibers know (the plain loop runs one lane
      // at a time and would answer every live lane, also inside a branch)
      "__activemask",
      // cooperative groups: group syncs and tile collectives are barriers and warp operations
      "cooperative_groups", "this_thread_block", "tiled_partition", "coalesced_threads"};
  return ids;
}

const std::map<std::string_view, std::string_view>& unsupported_identifiers() {
  static const std::map<std::string_view, std::string_view> ids = {
      {"wmma", "WMMA / tensor cores (nvcuda::wmma)"},
      {"nvcuda", "WMMA / tensor cores (nvcuda::wmma)"},
      {"this_grid", "grid-wide cooperative groups (this_grid)"},
      {"grid_group", "grid-wide cooperative groups (grid_group)"},
      {"this_multi_grid", "grid-wide cooperative groups (this_multi_grid)"},
      {"cluster_group", "thread block clusters (cluster_group)"},
      {"cudaLaunchCooperativeKernel", "cooperative launches (cudaLaunchCooperativeKernel)"},
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
      {"__nv_fp8_e4m3", "fp8 types"},
      {"__nv_fp8_e5m2", "fp8 types"},
      {"__cluster_dims__", "thread block clusters"},
      {"cudaLaunchKernelEx", "cudaLaunchKernelEx (use <<<...>>>)"},
      {"cudaLaunchKernel", "cudaLaunchKernel (use <<<...>>>)"},
      {"__pipeline_arrive_on", "asynchronous barriers (__pipeline_arrive_on)"},
      {"curand_init", "cuRAND device API"},
      {"curandState", "cuRAND device API"},
  };
  return ids;
}

// Unsupported headers: exact names, or prefixes ending in '/'. Headers of CUDA features the
// emulation lacks (cuda_fp8.h, mma.h, ...) are not listed: including one is no
// use of it; the identifiers above decide, after preprocessing.
std::string_view unsupported_header(std::string_view h) {
  static const std::vector<std::pair<std::string_view, std::string_view>> hs = {
      {"cuda/", "libcu++ (<cuda/...>)"},
      {"cub/", "CUB"},
      {"thrust/", "Thrust"},
      {"cublas_v2.h", "cuBLAS"},
      {"cublas.h", "cuBLAS"},
      {"cublasLt.h", "cuBLAS"},
      {"cudnn.h", "cuDNN"},
      {"cufft.h", "cuFFT"},
      {"curand.h", "cuRAND"},
      {"cusparse.h", "cuSPARSE"},
      {"texture_fetch_functions.h", "textures"},
  };
  for (const auto& [name, what] : hs) {
    if (name.back() == '/' ? h.substr(0, name.size()) == name : h == name) return what;
  }
  return {};
}

class rewriter {
 public:
  rewriter(std::string_view src, std::string_view filename)
      : src_(src), filename_(filename), toks_(lex(src)) {}

  rewrite_output run() {
    rewrite_output out;
    scan_features();
    for (std::size_t i = 0; i < toks_.size() && errors_.empty(); ++i) {
      if (is_launch_start(i)) {
        i = rewrite_launch(i);
        ++out.launches;
      } else if (text(i) == "__shared__") {
        shared_rewrite s = rewrite_shared_declaration(token_view{src_, toks_}, i, edits_);
        if (!s.error.empty() && live_[static_cast<std::size_t>(toks_[i].line)]) fail(s.line, s.error);
        if (s.lockstep > 0) uses_sync_ = true;  // the lockstep at volatile accesses needs the fiber path
        out.volatile_pointers += s.lockstep;
        i = s.last;
      } else if ((text(i) == "asm" || text(i) == "__asm__" || text(i) == "__asm") && live_[static_cast<std::size_t>(toks_[i].line)]) {
        i = inline_asm(i);
      } else if (text(i) == "volatile" && rewrite_volatile_pointer(token_view{src_, toks_}, i, edits_)) {
        uses_sync_ = true;  // the lockstep at volatile accesses needs the fiber path
        ++out.volatile_pointers;
      } else if (text(i) == "__noinline__") {
        edits_.push_back({toks_[i].pos, toks_[i].pos + toks_[i].len, "__attribute__((noinline))"});
      }
    }
    out.uses_sync = uses_sync_;
    out.inline_asm = asm_rewritten_;
    out.inline_asm_unsupported = asm_unsupported_;
    if (asm_unsupported_ > 0)
      fail(asm_first_line_, "inline PTX not supported by the CPU emulation (it runs cp.async, ld.global.nc and "
                            "mov %laneid): " + std::to_string(asm_unsupported_) + " asm statement(s), the first with " +
                            asm_first_);
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

  // The directives, for conditional inclusion (conditionals.hpp).
  std::vector<directive> directives() const {
    std::vector<directive> out;
    for (std::size_t i = 0; i < toks_.size(); ++i) {
      if (!toks_[i].directive_start) continue;
      directive d;
      d.line = d.last_line = toks_[i].line;
      for (std::size_t j = i + 1; j < toks_.size() && toks_[j].in_directive && !toks_[j].directive_start; ++j) {
        if (!d.text.empty() && toks_[j - 1].pos + toks_[j - 1].len != toks_[j].pos) d.text += ' ';
        d.text += std::string(text(j));
        d.last_line = toks_[j].line;
      }
      out.push_back(std::move(d));
    }
    return out;
  }

  void scan_features() {
    std::set<std::string_view> reported;
    std::string found;
    const int max_line = toks_.empty() ? 0 : toks_.back().line;
    live_ = live_lines(directives(), max_line);
    const std::vector<bool>& live = live_;
    for (std::size_t i = 0; i < toks_.size(); ++i) {
      const token& t = toks_[i];
      std::string_view what;
      if (t.kind == tk::ident && sync_identifiers().count(text(i))) uses_sync_ = true;
      if (!live[static_cast<std::size_t>(t.line)]) continue;  // in a disabled #if branch
      if (t.kind == tk::ident) {
        std::string_view id = text(i);
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
    std::size_t close = token_view{src_, toks_}.match_forward(open);
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

  // An asm statement: rewritten into emulation calls, or counted as unsupported.
  std::size_t inline_asm(std::size_t i) {
    asm_rewrite r = rewrite_inline_asm(token_view{src_, toks_}, i, edits_);
    if (r.ok) {
      ++asm_rewritten_;
    } else if (asm_unsupported_++ == 0) {
      asm_first_ = r.unsupported;
      asm_first_line_ = toks_[i].line;
    }
    return r.last;
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
  std::vector<bool> live_;  // lines g++ compiles (conditionals.hpp)
  int asm_rewritten_ = 0, asm_unsupported_ = 0, asm_first_line_ = 0;
  std::string asm_first_;
};

}  // namespace

rewrite_output rewrite_cuda_source(std::string_view source, std::string_view filename) {
  return rewriter(source, filename).run();
}

}  // namespace leap::emu
