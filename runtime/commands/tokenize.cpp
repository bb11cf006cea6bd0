// `leap tokenize --tokenizer FILE --jsonl`: what a model sees. Reads one JSON string per line on
// stdin and writes one JSON array of token ids per line on stdout, encoded by the tokenizer.json
// FILE (added and special tokens in the text are matched; nothing is added: no BOS, no EOS).
// Needs no configuration and no services.
#include "policy/text/tokenizer.hpp"
#include "runtime/commands/table.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

namespace leap::runtime {
namespace {

void write_ids(const std::vector<int>& ids, std::string& buf) {
  buf.clear();
  buf.push_back('[');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) buf.push_back(',');
    buf += std::to_string(ids[i]);
  }
  buf += "]\n";
  std::cout << buf << std::flush;
}

int run_tokenize(const command_context& ctx) {
  auto path = ctx.args.opt("--tokenizer");
  if (!path)
    return usage_error("tokenize: --tokenizer FILE is required (a Hugging Face tokenizer.json)");
  if (!ctx.args.has("--jsonl"))
    return usage_error("tokenize: --jsonl is required (stdin: one JSON string per line; the only "
                       "input format)");
  auto tok = policy::tokenizer::load(*path);
  if (!tok) {
    std::cerr << "leap: tokenize: " << tok.message() << "\n";
    return exit_usage;
  }
  std::string line, buf;
  for (std::size_t n = 1; std::getline(std::cin, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      std::cerr << "leap: tokenize: stdin line " << n << " is empty; expected one JSON string per "
                << "line (\"\" for empty text)\n";
      return exit_usage;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      std::cerr << "leap: tokenize: stdin line " << n << " is not valid JSON (" << e.what()
                << "); expected one JSON string per line, e.g. \"int main() {}\"\n";
      return exit_usage;
    }
    if (!j.is_string()) {
      std::cerr << "leap: tokenize: stdin line " << n << " is a JSON " << j.type_name()
                << ", not a string; expected one JSON string per line, e.g. \"int main() {}\"\n";
      return exit_usage;
    }
    write_ids(tok->encode(j.get_ref<const std::string&>(), true), buf);
  }
  return exit_ok;
}

} // namespace

command tokenize_command() {
  return {{"tokenize"},
          "--tokenizer FILE --jsonl",
          "token ids of text: stdin one JSON string per line, stdout one\n"
          "JSON array of ids per line (special tokens matched, none added)",
          command::needs::nothing,
          false,
          false,
          run_tokenize};
}

} // namespace leap::runtime
