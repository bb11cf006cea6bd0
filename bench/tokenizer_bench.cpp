// Tokenizer throughput on CUDA source text (every file under tasks/, concatenated) with a 4096
// vocab trained on the CUDA toolkit's headers (the first 4 MB of $LEAP_CUDA_HOME/include/*.h, or
// /usr/local/cuda; the task files themselves when absent, which give only ~1400 tokens):
// encode with a warm and a cold word cache, decode, and training time.
#include "common/fs.hpp"
#include "policy/text/bpe_trainer.hpp"
#include "policy/text/tokenizer.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace leap::policy;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string>& sources() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> paths, out;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(LEAP_SOURCE_DIR) / "tasks"))
      if (e.is_regular_file()) paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths)
      if (auto t = leap::read_file(p)) out.push_back(*t);
    return out;
  }();
  return texts;
}

const std::string& all_text() {
  static const std::string s = [] {
    std::string r;
    for (const auto& t : sources()) r += t;
    return r;
  }();
  return s;
}

// Training text: CUDA headers, sorted by name, up to 4 MB.
const std::vector<std::string>& training_texts() {
  static const std::vector<std::string> texts = [] {
    const char* home = std::getenv("LEAP_CUDA_HOME");
    fs::path inc = fs::path(home ? home : "/usr/local/cuda") / "include";
    std::vector<std::string> paths, out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(inc, ec))
      if (e.is_regular_file() && e.path().extension() == ".h") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    std::size_t bytes = 0;
    for (const auto& p : paths) {
      if (bytes >= (4u << 20)) break;
      if (auto t = leap::read_file(p)) {
        bytes += t->size();
        out.push_back(std::move(*t));
      }
    }
    return out.empty() ? sources() : out;
  }();
  return texts;
}

const tokenizer& trained() {
  static const tokenizer tok = *bpe_trainer(bpe_trainer_options{4096}).train(training_texts());
  return tok;
}

void BM_EncodeWarmCache(benchmark::State& st) {
  const auto& tok = trained();
  const auto& text = all_text();
  std::size_t tokens = tok.encode(text).size();
  for (auto _ : st) benchmark::DoNotOptimize(tok.encode(text));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * text.size()));
  st.counters["bytes_per_token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
  st.counters["vocab"] = tok.vocab_size();
}
BENCHMARK(BM_EncodeWarmCache)->Unit(benchmark::kMillisecond);

void BM_EncodeColdCache(benchmark::State& st) {
  const std::string json = trained().to_json();
  const auto& text = all_text();
  for (auto _ : st) {
    st.PauseTiming();
    auto fresh = *tokenizer::from_json(json); // new, empty word cache
    st.ResumeTiming();
    benchmark::DoNotOptimize(fresh.encode(text));
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * text.size()));
}
BENCHMARK(BM_EncodeColdCache)->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& st) {
  const auto& tok = trained();
  auto ids = tok.encode(all_text());
  for (auto _ : st) benchmark::DoNotOptimize(tok.decode(ids));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * all_text().size()));
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

// Training a 4096 vocab on the CUDA headers (a few MB of real C/C++ text).
void BM_Train4096(benchmark::State& st) {
  const auto& corpus = training_texts();
  std::size_t bytes = 0;
  for (const auto& t : corpus) bytes += t.size();
  for (auto _ : st) benchmark::DoNotOptimize(bpe_trainer(bpe_trainer_options{4096}).train(corpus));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * bytes));
  st.counters["corpus_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_Train4096)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace

BENCHMARK_MAIN();
