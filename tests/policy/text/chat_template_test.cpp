// Chat formats (policy/text/prompt.hpp) against the published chat templates as Hugging Face
// transformers renders them: leap's chatml and llama3 renderings of system/user/assistant
// conversations, and of leap's own task prompts with feedback turns, equal byte for byte what
// transformers' apply_chat_template (add_generation_prompt true) renders with the chat_template of
// Llama 3's, Qwen2.5's and Qwen3's tokenizer_config.json (tests/python/chat_templates/, cited in
// SOURCES.md there; rendered by tests/python/reference/chat_reference.py). The documented
// differences are checked exactly: Qwen3's reasoning blocks (ChatTemplate.Qwen3...) and the default
// system message Qwen2.5's template writes when a conversation has none (ChatTemplate.Qwen2_5...).
// Needs the test-only Python environment (.venv, scripts/install-test-deps.sh); those tests are
// skipped, saying why, without it (the format-only tests run regardless).
#include "common/fs.hpp"
#include "policy/text/hf_files.hpp"
#include "policy/text/prompt.hpp"
#include "tests/policy/python_reference.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace leap;
using namespace leap::policy;

using test::missing_python;
using test::quoted;
using test::run_reference;
using test::temp_dir;

namespace {

// What Qwen2.5's template writes first when a conversation has no system message.
const std::string qwen2_5_default_system =
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n";

struct reference {
  std::string renderer;
  std::string text;
};

// The reference renderings of `conversations` with the published template `name` (llama3, qwen2_5, qwen3).
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
  std::vector<reference> out;
  if (!run_reference("chat_reference.py", name, dir.path + "/conversations.jsonl", dir.path + "/out.jsonl",
                     dir.path + "/err.txt"))
    return out;
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

const std::vector<turn_record> sample_history{{"__global__ void add() {}", "compile error: 'n' undeclared"},
                                              {"extern \"C\" void solution() {}", "wrong answer at out[3]"}};

// Conversations every format must render exactly as the reference (Qwen2.5: after its default
// system message where a conversation has none).
std::vector<std::vector<chat_message>> same_conversations() {
  std::vector<std::vector<chat_message>> c;
  c.push_back({{"system", "You write CUDA kernels."}, {"user", "Write a kernel that adds two vectors."}});
  c.push_back({{"user", "a"}, {"assistant", "b"}, {"user", "c"}});
  // Whitespace around contents (Llama 3's template trims it, the Qwen templates keep it) and Unicode.
  c.push_back({{"system", " Be brief.\n"},
               {"user", "  Hi\n\n"},
               {"assistant", "Hello!\n"},
               {"user", "Again\t"}});
  c.push_back({{"user", "na\u00efve \u2013 \u00fcn\u00efc\u00f6d\u00e9 \u2713 \u65e5\u672c\u8a9e"},
               {"assistant", "```cuda\n__global__ void k() {}\n```"},
               {"user", "\u00a0Fix it.\u00a0"}});
  // leap's own multi-turn task prompt: the task, two attempts with their feedback (it must stay last).
  c.push_back(prompt_messages(sample_task(), sample_history));
  return c;
}

// leap's rendering as the reference writes it: as is, or with Qwen2.5's default system message
// in front when the conversation has no system message.
std::string expected(const std::string& name, const std::vector<chat_message>& conv, chat_format format) {
  auto ours = render_chat(conv, format);
  if (name == "qwen2_5" && (conv.empty() || conv[0].role != "system")) ours = qwen2_5_default_system + ours;
  return ours;
}

void check_same(const std::string& name, chat_format format) {
  if (auto why = missing_python(); !why.empty()) GTEST_SKIP() << why;
  const auto convs = same_conversations();
  const auto ref = render_reference(name, convs);
  ASSERT_EQ(ref.size(), convs.size());
  for (std::size_t i = 0; i < convs.size(); ++i)
    EXPECT_EQ(expected(name, convs[i], format), ref[i].text) << name << " conversation " << i << " ("
                                                             << ref[i].renderer << ")";
  // render_prompt writes prompt_messages in the format: the task prompt with its feedback turns.
  auto prompt = render_prompt(sample_task(), sample_history, format);
  if (name == "qwen2_5") prompt = qwen2_5_default_system + prompt;
  EXPECT_EQ(prompt, ref.back().text);
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

TEST(ChatTemplate, Llama3MatchesTransformers) { check_same("llama3", chat_format::llama3); }

TEST(ChatTemplate, Qwen3MatchesTransformers) { check_same("qwen3", chat_format::chatml); }

// Qwen2.5's template is chatml plus one thing: a conversation without a system message gets
// qwen2_5_default_system first. leap's chatml writes no system message it was not given (its task
// prompts have none), so for Qwen2.5 leap's prompts are the template's minus that message; check_same
// adds it, and this test pins the difference itself.
TEST(ChatTemplate, Qwen2_5MatchesTransformersAfterItsDefaultSystemMessage) {
  check_same("qwen2_5", chat_format::chatml);
  if (auto why = missing_python(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<chat_message> without{{"user", "a"}};
  const std::vector<chat_message> with{{"system", "S"}, {"user", "a"}};
  const auto ref = render_reference("qwen2_5", {without, with});
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_EQ(ref[0].text, qwen2_5_default_system + "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_NE(render_chat(without, chat_format::chatml), ref[0].text);
  EXPECT_EQ(render_chat(with, chat_format::chatml), ref[1].text);
}

// Llama 3's template has no notion of reasoning and always appends the assistant header: a
// conversation ending with an assistant message and one holding "</think>" render the same.
TEST(ChatTemplate, Llama3ReasoningAndTrailingAssistantAreWrittenAsGiven) {
  if (auto why = missing_python(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::vector<chat_message>> convs{
      {{"user", "a"}, {"assistant", "b"}},
      {{"user", "a"}, {"assistant", "<think>\nplan\n</think>\n\nanswer"}, {"user", "c"}}};
  const auto ref = render_reference("llama3", convs);
  ASSERT_EQ(ref.size(), convs.size());
  for (std::size_t i = 0; i < convs.size(); ++i) {
    EXPECT_EQ(ref[i].renderer.rfind("transformers ", 0), 0u) << ref[i].renderer;
    EXPECT_EQ(render_chat(convs[i], chat_format::llama3), ref[i].text) << i;
  }
}

// Qwen2.5's template writes assistant messages as given, like chatml: a trailing assistant message
// gets no reasoning block and "</think>" is kept.
TEST(ChatTemplate, Qwen2_5ReasoningAndTrailingAssistantAreWrittenAsGiven) {
  if (auto why = missing_python(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::vector<chat_message>> convs{
      {{"system", "S"}, {"user", "a"}, {"assistant", "b"}},
      {{"system", "S"}, {"user", "a"}, {"assistant", "<think>\nplan\n</think>\n\nanswer"}, {"user", "c"}}};
  const auto ref = render_reference("qwen2_5", convs);
  ASSERT_EQ(ref.size(), convs.size());
  for (std::size_t i = 0; i < convs.size(); ++i) EXPECT_EQ(render_chat(convs[i], chat_format::chatml), ref[i].text) << i;
}

// Where chatml and Qwen3's template differ, exactly:
//  1. An assistant message after the last user message gets an empty reasoning block: Qwen3
//     writes "<|im_start|>assistant\n<think>\n\n</think>\n\n" + content, chatml (Qwen2.5's
//     template) "<|im_start|>assistant\n" + content. leap's prompts always end with a user turn.
//  2. An earlier assistant message containing "</think>" is cut by Qwen3 to the text after the
//     last "</think>" with leading newlines removed (the reasoning is left out of the history);
//     chatml keeps the message as given. leap's answers hold no "</think>".
TEST(ChatTemplate, Qwen3DiffersFromChatmlOnlyInReasoningBlocks) {
  if (auto why = missing_python(); !why.empty()) GTEST_SKIP() << why;
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

// tokenizer_config.json as transformers' save_pretrained writes it, with each published template
// and the special tokens under their ids in the real vocabularies (Llama 3's checked against Meta's
// tokenizer in llama-models; SOURCES.md): leap reads the chat format, the end-of-turn marker's id
// and the bos/eos/pad tokens from it.
TEST(ChatTemplate, TokenizerConfigsWithTheRealIds) {
  if (auto why = missing_python(); !why.empty()) GTEST_SKIP() << why;
  struct want {
    std::string name;
    chat_format format;
    std::string bos, eos, pad;
    std::int64_t end_of_turn_id, eos_id;
  };
  // The three configs from one run of the reference (one import of transformers, not three).
  temp_dir dir("leap-tc-");
  ASSERT_TRUE(run_reference("chat_reference.py", "--tokenizer-configs " + dir.path + " llama3 qwen2_5 qwen3", "",
                            dir.path + "/out.txt", dir.path + "/err.txt"));
  for (const want& w : {want{"llama3", chat_format::llama3, "<|begin_of_text|>", "<|eot_id|>", "", 128009, 128009},
                        want{"qwen2_5", chat_format::chatml, "", "<|im_end|>", "<|endoftext|>", 151645, 151645},
                        want{"qwen3", chat_format::chatml, "", "<|im_end|>", "<|endoftext|>", 151645, 151645}}) {
    const auto path = dir.path + "/" + w.name + ".json";
    auto text = read_file(path);
    ASSERT_TRUE(text.ok()) << text.message();
    auto tc = parse_tokenizer_config(*text, path);
    ASSERT_TRUE(tc.ok()) << tc.message();
    EXPECT_EQ(chat_format_of_template(tc->chat_template), w.format) << w.name;
    EXPECT_EQ(tc->bos_token, w.bos) << w.name;
    EXPECT_EQ(tc->eos_token, w.eos) << w.name;
    EXPECT_EQ(tc->pad_token, w.pad) << w.name;
    EXPECT_EQ(tc->id_of(tc->eos_token), w.eos_id) << w.name;
    EXPECT_EQ(tc->id_of(std::string(end_of_turn(w.format))), w.end_of_turn_id) << w.name;
    if (w.format == chat_format::llama3) {
      EXPECT_EQ(tc->id_of("<|begin_of_text|>"), 128000);
      EXPECT_EQ(tc->id_of("<|end_of_text|>"), 128001);
    } else {
      EXPECT_EQ(tc->id_of("<|im_start|>"), 151644) << w.name;
      EXPECT_EQ(tc->id_of("<|endoftext|>"), 151643) << w.name;
    }
  }
}
