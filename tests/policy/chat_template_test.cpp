// Chat formats (policy/prompt.hpp) against the real chat templates: leap's chatml and llama3
// renderings of system/user/assistant conversations, and of leap's own task prompts with feedback
// turns, equal byte for byte what the chat_template of Qwen3's and Llama 3's
// tokenizer_config.json renders (add_generation_prompt true), as @lenml/tokenizers renders it
// (tests/policy/conformance/chat_reference.js; for Qwen3, whose template that version's Jinja
// parser cannot parse, @huggingface/jinja, the Jinja engine of transformers.js). Two documented
// differences, both from Qwen3's template, are checked exactly (see ChatTemplate.Qwen3...).
// Needs node and the npm packages scripts/install-test-deps.sh installs; skipped, saying why,
// without them (the format-only tests run regardless).
#include "common/fs.hpp"
#include "policy/hf_files.hpp"
#include "policy/prompt.hpp"
#include "policy/tokenizer.hpp"
#include "tests/policy/conformance_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace leap;
using namespace leap::policy;
namespace fs = std::filesystem;

using test::conformance_dir;
using test::quoted;
using test::temp_dir;
using test::tokenizer_models_dir;

namespace {


// Why the reference cannot run here, or "" when it can.
std::string missing_reference(const std::string& name) {
  if (std::system("command -v node >/dev/null 2>&1") != 0)
    return "node is not installed (scripts/install-test-deps.sh installs it; `make test` runs that script)";
  for (const std::string& p : {conformance_dir + "/node_modules/@lenml/tokenizers/package.json",
                               conformance_dir + "/node_modules/@huggingface/jinja/package.json",
                               tokenizer_models_dir(name) + "/tokenizer_config.json"})
    if (!fs::exists(p))
      return p + " is missing: run scripts/install-test-deps.sh (`make test` runs it)";
  return "";
}

struct reference {
  std::string renderer;
  std::string text;
};

// The reference renderings of `conversations` with the real template of `name`.
std::vector<reference> render_reference(const std::string& name,
                                        const std::vector<std::vector<chat_message>>& conversations) {
  temp_dir dir("leap-chat-");
  EXPECT_FALSE(dir.path.empty());
  {
    std::ofstream f(dir.path + "/conversations.jsonl", std::ios::binary);
    for (const auto& c : conversations) {
      nlohmann::json msgs = nlohmann::json::array();
      for (const auto& m : c) msgs.push_back({{"role", m.role}, {"content", m.content}});
      f << msgs.dump() << "\n";
    }
  }
  const std::string cmd = "cd " + quoted(conformance_dir) + " && node chat_reference.js " + name + " < " +
                          quoted(dir.path + "/conversations.jsonl") + " > " + quoted(dir.path + "/out.jsonl") +
                          " 2> " + quoted(dir.path + "/err.txt");
  const int rc = std::system(cmd.c_str());
  auto err = read_file(dir.path + "/err.txt");
  EXPECT_EQ(rc, 0) << "reference failed: " << cmd << "\n" << (err ? *err : err.message());
  std::vector<reference> out;
  std::ifstream in(dir.path + "/out.jsonl", std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    out.push_back({j.at("renderer").get<std::string>(), j.at("text").get<std::string>()});
  }
  EXPECT_EQ(out.size(), conversations.size()) << "the reference printed fewer renderings than conversations";
  return out;
}

task_view sample_task() {
  return {"vector_add",
          "Add two float vectors of length n: out[i] = a[i] + b[i].\n",
          "extern \"C\" void solution(const float* a, const float* b, float* out, int n)",
          {}};
}

// Conversations every format must render exactly as the reference.
std::vector<std::vector<chat_message>> same_conversations() {
  std::vector<std::vector<chat_message>> c;
  c.push_back({{"system", "You write CUDA kernels."}, {"user", "Write a kernel that adds two vectors."}});
  c.push_back({{"user", "a"}, {"assistant", "b"}, {"user", "c"}});
  // Whitespace around contents (Llama 3's template trims it, Qwen3's keeps it) and Unicode.
  c.push_back({{"system", " Be brief.\n"},
               {"user", "  Hi\n\n"},
               {"assistant", "Hello!\n"},
               {"user", "Again\t"}});
  c.push_back({{"user", "na\u00efve \u2013 \u00fcn\u00efc\u00f6d\u00e9 \u2713 \u65e5\u672c\u8a9e"},
               {"assistant", "```cuda\n__global__ void k() {}\n```"},
               {"user", "\u00a0Fix it.\u00a0"}});
  // leap's own multi-turn task prompt: the task, two attempts with their feedback.
  c.push_back(prompt_messages(sample_task(), {{"__global__ void add() {}", "compile error: 'n' undeclared"},
                                              {"extern \"C\" void solution() {}", "wrong answer at out[3]"}}));
  return c;
}

void check_same(const std::string& name, chat_format format) {
  if (auto why = missing_reference(name); !why.empty()) GTEST_SKIP() << why;
  const auto convs = same_conversations();
  const auto ref = render_reference(name, convs);
  ASSERT_EQ(ref.size(), convs.size());
  for (std::size_t i = 0; i < convs.size(); ++i)
    EXPECT_EQ(render_chat(convs[i], format), ref[i].text) << name << " conversation " << i << " (" << ref[i].renderer
                                                          << ")";
  // render_prompt writes prompt_messages in the format: the task prompt with its feedback turns.
  const std::vector<turn_record> history{{"__global__ void add() {}", "compile error: 'n' undeclared"},
                                         {"extern \"C\" void solution() {}", "wrong answer at out[3]"}};
  EXPECT_EQ(render_prompt(sample_task(), history, format), ref.back().text);
}

} // namespace

TEST(ChatTemplate, FormatsByNameAndTemplate) {
  for (auto f : {chat_format::leap, chat_format::chatml, chat_format::llama3})
    EXPECT_EQ(chat_format_from_name(chat_format_name(f)), f);
  EXPECT_FALSE(chat_format_from_name("mistral").has_value());
  EXPECT_EQ(chat_format_of_template("{{ '<|im_start|>' + message.role }}"), chat_format::chatml);
  EXPECT_EQ(chat_format_of_template("{{ '<|start_header_id|>' }}"), chat_format::llama3);
  EXPECT_FALSE(chat_format_of_template("[INST] {{ m }} [/INST]").has_value());
  EXPECT_EQ(end_of_turn(chat_format::chatml), "<|im_end|>");
  EXPECT_EQ(end_of_turn(chat_format::llama3), "<|eot_id|>");
  EXPECT_EQ(end_of_turn(chat_format::leap), "<|eos|>");
}

TEST(ChatTemplate, LeapFormatIsUnchanged) {
  // The default format is leap's template, as before chat formats existed.
  const std::vector<chat_message> msgs{{"system", "S"}, {"user", "U"}, {"assistant", "A"}, {"user", "V"}};
  EXPECT_EQ(render_chat(msgs), "<|bos|><|user|>S\n\nU<|assistant|>A<|eos|><|user|>V<|assistant|>");
  EXPECT_EQ(render_chat(msgs, chat_format::leap), render_chat(msgs));
  EXPECT_EQ(render_prompt(sample_task(), {}, chat_format::leap), render_prompt(sample_task(), {}));
}

TEST(ChatTemplate, ChatmlAndLlama3Layout) {
  const std::vector<chat_message> msgs{{"system", "S"}, {"user", " U "}, {"assistant", "A"}};
  EXPECT_EQ(render_chat(msgs, chat_format::chatml),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\n U <|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render_chat(msgs, chat_format::llama3),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nA<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama3MatchesTheReference) { check_same("llama3", chat_format::llama3); }

TEST(ChatTemplate, Qwen3MatchesTheReference) { check_same("qwen3", chat_format::chatml); }

// Llama 3's template has no notion of reasoning and always appends the assistant header: a
// conversation ending with an assistant message and one holding "</think>" render the same.
TEST(ChatTemplate, Llama3ReasoningAndTrailingAssistantAreWrittenAsGiven) {
  if (auto why = missing_reference("llama3"); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::vector<chat_message>> convs{
      {{"user", "a"}, {"assistant", "b"}},
      {{"user", "a"}, {"assistant", "<think>\nplan\n</think>\n\nanswer"}, {"user", "c"}}};
  const auto ref = render_reference("llama3", convs);
  ASSERT_EQ(ref.size(), convs.size());
  for (std::size_t i = 0; i < convs.size(); ++i) {
    EXPECT_EQ(ref[i].renderer, "@lenml/tokenizers");
    EXPECT_EQ(render_chat(convs[i], chat_format::llama3), ref[i].text) << i;
  }
}

// Where chatml and Qwen3's template differ, exactly:
//  1. An assistant message after the last user message gets an empty reasoning block: Qwen3
//     writes "<|im_start|>assistant\n<think>\n\n</think>\n\n" + content, chatml (Qwen2's
//     template) "<|im_start|>assistant\n" + content. leap's prompts always end with a user turn.
//  2. An earlier assistant message containing "</think>" is cut by Qwen3 to the text after the
//     last "</think>" with leading newlines removed (the reasoning is left out of the history);
//     chatml keeps the message as given. leap's answers hold no "</think>".
TEST(ChatTemplate, Qwen3DiffersFromChatmlOnlyInReasoningBlocks) {
  if (auto why = missing_reference("qwen3"); !why.empty()) GTEST_SKIP() << why;
  const std::vector<chat_message> trailing{{"system", "S"}, {"user", "a"}, {"assistant", "b"}};
  const std::vector<chat_message> reasoning{{"user", "a"}, {"assistant", "<think>\nplan\n</think>\n\nanswer"}, {"user", "c"}};
  const auto ref = render_reference("qwen3", {trailing, reasoning});
  ASSERT_EQ(ref.size(), 2u);

  auto ours = render_chat(trailing, chat_format::chatml);
  const std::string header = "<|im_start|>assistant\nb";
  auto at = ours.find(header);
  ASSERT_NE(at, std::string::npos);
  ours.insert(at + std::string("<|im_start|>assistant\n").size(), "<think>\n\n</think>\n\n");
  EXPECT_EQ(ours, ref[0].text);

  auto cut = reasoning;
  cut[1].content = "answer";
  EXPECT_EQ(render_chat(cut, chat_format::chatml), ref[1].text);
  EXPECT_NE(render_chat(reasoning, chat_format::chatml), ref[1].text);
}

// The real tokenizer_config.json files: special tokens, eos ids, the chat format of the template;
// and the rendered markers are single special tokens of the real tokenizer.json.
TEST(ChatTemplate, RealTokenizerConfigs) {
  for (const std::string name : {"llama3", "qwen3"}) {
    if (auto why = missing_reference(name); !why.empty()) GTEST_SKIP() << why;
    auto text = read_file(tokenizer_models_dir(name) + "/tokenizer_config.json");
    ASSERT_TRUE(text.ok()) << text.message();
    auto tc = parse_tokenizer_config(*text, name);
    ASSERT_TRUE(tc.ok()) << tc.message();
    auto tok = tokenizer::load(tokenizer_models_dir(name) + "/tokenizer.json");
    ASSERT_TRUE(tok.ok()) << tok.message();
    const auto format = name == "llama3" ? chat_format::llama3 : chat_format::chatml;
    EXPECT_EQ(chat_format_of_template(tc->chat_template), format) << name;
    EXPECT_EQ(tc->id_of(tc->eos_token), tok->token_id(tc->eos_token)) << name;
    if (name == "llama3") {
      EXPECT_EQ(tc->eos_token, "<|end_of_text|>");
      EXPECT_EQ(tc->id_of("<|end_of_text|>"), 128001);
      EXPECT_EQ(tc->id_of("<|eot_id|>"), 128009);
      EXPECT_EQ(tc->bos_token, "<|begin_of_text|>");
    } else {
      EXPECT_EQ(tc->eos_token, "<|im_end|>");
      EXPECT_EQ(tc->id_of("<|im_end|>"), 151645);
      EXPECT_EQ(tc->pad_token, "<|endoftext|>");
    }
    const int eot = tok->token_id(end_of_turn(format));
    ASSERT_GE(eot, 0);
    EXPECT_TRUE(tok->is_special(eot));
    auto ids = tok->encode(render_chat({{"user", "hi"}}, format), true);
    const auto n_eot = std::count(ids.begin(), ids.end(), eot);
    EXPECT_EQ(n_eot, 1) << name;
  }
}
