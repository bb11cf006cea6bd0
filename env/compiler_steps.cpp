#include "env/compiler_job.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "env/cpu_emu/rewriter.hpp"
#include "env/glue.hpp"

#include <filesystem>
#include <memory>
#include <system_error>

namespace fs = std::filesystem;

namespace leap::env {

using compiler_detail::cpu_syntax_check_flags;
using compiler_detail::step;

namespace compiler_detail {
const std::vector<std::string> cpu_syntax_check_flags{"-Xcicc", "-O0", "-Xptxas", "-O0"};
} // namespace compiler_detail

namespace {

std::vector<std::string> nvcc_command(const toolchain& tc, const compiler_options& opts,
                                      const std::string& mode, const std::string& out,
                                      const std::string& display_name,
                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{tc.nvcc, mode, "-arch=" + opts.arch};
  for (auto& f : opts.nvcc_flags)
    argv.push_back(f);
  argv.insert(argv.end(), extra.begin(), extra.end());
  // --time: nvcc's own seconds per phase, to split its wall time into stages (not a cache-key
  // input: it changes no output).
  argv.insert(argv.end(), {"--time", nvcc_time_table_name, "-o", out, display_name});
  return argv;
}

std::vector<std::string> glue_command(const toolchain& tc) {
  return {tc.host_cxx, "-c", "-O2", "-std=c++17", "-o", "glue.o", "glue.cpp"};
}

} // namespace

cpu_build_commands cpu_build_command_lines(const toolchain& tc, const compiler_options& opts,
                                           const std::string& display_name) {
  cpu_build_commands c;
  // nvcc's front end checks host and device code: the truth for compile_error; ptxas still runs,
  // so its errors (e.g. too much static shared memory) stay in the truth.
  c.nvcc = nvcc_command(tc, opts, "-cubin", "solution.cubin", display_name, cpu_syntax_check_flags);
  c.emu_build = {tc.host_cxx, "-c", "-std=c++17", "-fstack-clash-protection"};
  // The precompiled shim headers, when built for these flags: g++ takes the matching one from
  // <pch>/cuda_runtime.h.gch/ and otherwise reads the header from the include dir below.
  if (!tc.emu_pch_dir.empty() && join(opts.emu_flags, " ") == tc.emu_pch_flags)
    c.emu_build.push_back("-I" + tc.emu_pch_dir);
  c.emu_build.push_back("-I" + tc.emu_include_dir);
  for (auto& f : opts.emu_flags)
    c.emu_build.push_back(f);
  c.emu_build.insert(c.emu_build.end(), {"-o", "solution_emu.o", "solution_emu.cpp"});
  c.glue = glue_command(tc);
  c.link = {tc.host_cxx};
  c.link.insert(c.link.end(), tc.link_flags.begin(), tc.link_flags.end());
  c.link.insert(c.link.end(), {"-o", "worker", "solution_emu.o", "glue.o", tc.harness_cpu_lib,
                               tc.emu_runtime_lib, "-lboost_context", "-pthread"});
  return c;
}

namespace {

// The task's glue object, compiled once and reused by every build of the task (its source
// depends on the task's signature alone): <cache_dir>/glue/<key>.o with <key>.sha256 beside it.
// An object whose checksum does not match is compiled again, never linked; publishing is best
// effort (temporary file + rename), a failure only costs the next build a glue compile.
step glue_step(const toolchain& tc, const std::string& cache_dir, const std::string& glue_source,
               const std::string& dir, std::vector<step>& after) {
  step compile{"glue", build_status::internal_error, glue_command(tc), {}, compile_stage::glue, ""};
  if (cache_dir.empty())
    return compile;
  sha256 k;
  k.field("leap-glue-v1").field(glue_source).field(join(glue_command(tc), " "));
  k.field(tc.host_cxx_version);
  auto base = cache_dir + "/glue/" + k.hex_digest();
  auto object = read_file(base + ".o");
  auto sum = read_file(base + ".sha256");
  if (object && sum && sha256_hex(*object) == *sum) {
    auto bytes = std::make_shared<std::string>(std::move(*object));
    return {"glue", build_status::internal_error, {},
            [dir, bytes]() -> result<void> { return write_file_atomic(dir + "/glue.o", *bytes); },
            compile_stage::glue, ""};
  }
  after.push_back({"glue", build_status::internal_error, {},
                   [dir, base]() -> result<void> {
                     auto built = read_file(dir + "/glue.o");
                     std::error_code ec;
                     fs::create_directories(fs::path(base).parent_path(), ec);
                     if (built && write_file_atomic(base + ".o", *built))
                       (void)write_file_atomic(base + ".sha256", sha256_hex(*built));
                     return {};
                   },
                   compile_stage::glue, ""});
  return compile;
}

} // namespace

void compiler::prepare_steps(const handle& h) {
  std::vector<step> publish_glue;
  step glue = glue_step(tc_, opts_.cache_dir, make_glue_source(h->task), h->dir, publish_glue);
  if (h->req.backend == backend::cuda) {
    h->steps.push_back({"nvcc", build_status::compile_error,
                        nvcc_command(tc_, opts_, "-c", "solution.o", h->display_name), {},
                        compile_stage::front_end, nvcc_time_table_name});
    h->steps.push_back(glue);
    h->steps.insert(h->steps.end(), publish_glue.begin(), publish_glue.end());
    h->steps.push_back({"link", build_status::compile_error,
                        {tc_.nvcc, "-arch=" + opts_.arch, "-o", "worker", "solution.o", "glue.o",
                         tc_.harness_cuda_lib},
                        {}, compile_stage::link, ""});
  } else {
    auto cmd = cpu_build_command_lines(tc_, opts_, h->display_name);
    h->steps.push_back({"nvcc", build_status::compile_error, cmd.nvcc, {}, compile_stage::front_end,
                        nvcc_time_table_name});
    std::string display = h->display_name, d = h->dir;
    // The rewrite fails on code the emulation cannot run (not the candidate's fault); writing its
    // output fails only inside leap.
    auto rewritten = std::make_shared<std::string>();
    h->steps.push_back({"rewrite", build_status::emulation_unsupported, {},
                        [display, rewritten, src = h->req.source]() -> result<void> {
                          auto rw = leap::emu::rewrite_cuda_source(src, display);
                          if (!rw.ok)
                            return make_error("the CPU emulation cannot run this code: " + rw.error);
                          *rewritten = std::move(rw.code);
                          return {};
                        }, compile_stage::rewrite, ""});
    h->steps.push_back({"rewrite", build_status::internal_error, {},
                        [d, rewritten]() -> result<void> {
                          return write_file_atomic(d + "/solution_emu.cpp", *rewritten);
                        }, compile_stage::rewrite, ""});
    h->steps.push_back({"g++", build_status::emulation_unsupported, cmd.emu_build, {},
                        compile_stage::host_build, ""});
    h->steps.push_back(glue);
    h->steps.insert(h->steps.end(), publish_glue.begin(), publish_glue.end());
    h->steps.push_back({"link", build_status::compile_error, cmd.link, {}, compile_stage::link, ""});
  }
}

} // namespace leap::env
