// Tests of the prompt template and of code extraction from completions (every robustness case:
// fences of each language tag, missing closing fence, no fence, prose, nothing usable).
#include "policy/text/bpe_trainer.hpp"
#include "policy/text/code_extract.hpp"
#include "policy/text/prompt.hpp"
#include "policy/text/special_tokens.hpp"

#include <gtest/gtest.h>

using namespace leap::policy;

namespace {

task_view vector_add() {
  return {"vector_add", "Element-wise vector addition: c[i] = a[i] + b[i].\n",
          R"(extern "C" void solution(const float* a, const float* b, float* c, int n))", {}};
}

const std::string code1 = "__global__ void k(float* c) {}\nextern \"C\" void solution(const float* a, const float* b, float* c, int n) { k<<<1, 1>>>(c); }";

std::size_t count(const std::string& s, std::string_view what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

} // namespace

TEST(Prompt, FirstTurnHasTaskAndEndsAtAssistant) {
  auto p = render_prompt(vector_add(), {});
  EXPECT_EQ(p.rfind(std::string(special::bos) + std::string(special::user), 0), 0u);
  EXPECT_NE(p.find("vector_add"), std::string::npos);
  EXPECT_NE(p.find("c[i] = a[i] + b[i]"), std::string::npos);
  EXPECT_NE(p.find(vector_add().signature), std::string::npos);
  EXPECT_NE(p.find("```cuda"), std::string::npos);
  EXPECT_EQ(count(p, special::assistant), 1u);
  EXPECT_EQ(count(p, special::eos), 0u);
  EXPECT_EQ(p.substr(p.size() - special::assistant.size()), special::assistant);
}

TEST(Prompt, LaterTurnsHoldPreviousCodeAndFeedback) {
  std::vector<turn_record> h{{code1, "wrong result: max abs error 3.1 at index 17 (expected 0.5, got 3.6)"}};
  auto p = render_prompt(vector_add(), h);
  EXPECT_NE(p.find(render_completion(code1) + std::string(special::eos)), std::string::npos);
  EXPECT_NE(p.find("max abs error 3.1 at index 17"), std::string::npos);
  EXPECT_EQ(count(p, special::assistant), 2u);
  EXPECT_EQ(p.substr(p.size() - special::assistant.size()), special::assistant);
  // Only the most recent turns are kept.
  h = {{"int oldest_code;", "f1"}, {"int middle_code;", "f2"}, {"int newest_code;", "f3"}};
  p = render_prompt(vector_add(), h);
  EXPECT_EQ(p.find("oldest_code"), std::string::npos);
  EXPECT_NE(p.find("middle_code"), std::string::npos);
  EXPECT_NE(p.find("newest_code"), std::string::npos);
  EXPECT_NE(p.find("1 earlier attempt not shown"), std::string::npos);
}

// Regression: the quickstart model copies the kernel name and parameter lists more
// reliably when the task name and signature sit right before the answer, on every turn.
TEST(Prompt, TaskNameAndSignatureRightBeforeTheAnswer) {
  const std::string tail = "Task: vector_add\nSignature:\n" + vector_add().signature + "\n"
                           + std::string(special::assistant);
  auto p1 = render_prompt(vector_add(), {});
  ASSERT_GE(p1.size(), tail.size());
  EXPECT_EQ(p1.substr(p1.size() - tail.size()), tail);
  auto p2 = render_prompt(vector_add(), {{code1, "compile error: line 3: expected ';'"}});
  ASSERT_GE(p2.size(), tail.size());
  EXPECT_EQ(p2.substr(p2.size() - tail.size()), tail);
  EXPECT_LT(p2.find(tail.substr(0, tail.size() - special::assistant.size())), p2.find(code1));
}

TEST(Prompt, CompletionRoundTripsThroughExtraction) {
  EXPECT_EQ(render_completion("int x;\n\n"), "```cuda\nint x;\n```");
  auto e = extract_code(render_completion(code1));
  ASSERT_TRUE(e.ok) << e.reason;
  EXPECT_EQ(e.code, code1 + "\n");
}

TEST(Prompt, TokenBoundaryAtTheAssistantMarker) {
  auto prompt = render_prompt(vector_add(), {{code1, "compile error: line 3: expected ';'"}});
  auto completion = render_completion(code1);
  bpe_trainer_options o;
  o.vocab_size = 400;
  auto tok = bpe_trainer(o).train({prompt + completion});
  ASSERT_TRUE(tok.ok()) << tok.message();
  auto a = tok->encode(prompt), b = tok->encode(completion), ab = tok->encode(prompt + completion);
  a.insert(a.end(), b.begin(), b.end());
  EXPECT_EQ(a, ab);
  EXPECT_EQ(ab.front(), tok->token_id(special::bos));
  EXPECT_EQ(tok->decode(ab), prompt + completion);
}

TEST(Prompt, ChatMessagesUseTheSameTemplate) {
  // A task's first turn sent as one user message renders exactly as render_prompt does.
  auto turn1 = render_prompt(vector_add(), {});
  const std::string head = "<|bos|><|user|>", tail = "<|assistant|>";
  auto task_text = turn1.substr(head.size(), turn1.size() - head.size() - tail.size());
  EXPECT_EQ(render_chat({{"user", task_text}}), turn1);
  EXPECT_EQ(render_chat({{"system", "S"}, {"user", "U"}, {"assistant", "A"}, {"user", "F"}}),
            "<|bos|><|user|>S\n\nU<|assistant|>A<|eos|><|user|>F<|assistant|>");
  EXPECT_EQ(render_chat({{"user", "a"}, {"user", "b"}}), "<|bos|><|user|>a\n\nb<|assistant|>");
}

TEST(Extract, FencesOfEachLanguage) {
  for (std::string tag : {"cuda", "cu", "c++", "cpp", "", "CUDA"}) {
    auto e = extract_code("Here is my kernel.\n```" + tag + "\n" + code1 + "\n```\nThis adds vectors.");
    ASSERT_TRUE(e.ok) << tag << ": " << e.reason;
    EXPECT_EQ(e.code, code1 + "\n") << tag;
  }
}

TEST(Extract, MissingClosingFenceTakesToEnd) {
  auto e = extract_code("```cuda\n" + code1 + "\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, code1 + "\n");
}

TEST(Extract, NoFenceButCodeLookingText) {
  auto e = extract_code("Sure! The solution is below.\n#include <cuda_runtime.h>\n" + code1
                        + "\nThis should be fast.");
  ASSERT_TRUE(e.ok) << e.reason;
  EXPECT_EQ(e.code, "#include <cuda_runtime.h>\n" + code1 + "\n");
  e = extract_code(code1);
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, code1 + "\n");
}

TEST(Extract, PrefersTheBlockDefiningSolutionAndSkipsOtherLanguages) {
  auto e = extract_code("```bash\nnvcc x.cu\n```\n```cuda\n__device__ int f();\n```\n```cuda\n"
                        + code1 + "\n```\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, code1 + "\n");
  e = extract_code("```cuda\n__global__ void k() {}\n```");
  ASSERT_TRUE(e.ok); // no solution: the env's guard rejects it with a precise reason
  EXPECT_EQ(e.code, "__global__ void k() {}\n");
}

TEST(Extract, InlineOpeningFenceAndTrailingSpecialTokens) {
  auto e = extract_code("Here it is: ```cuda\n" + code1 + "\n```<|eos|>```cuda\nint junk;\n```");
  ASSERT_TRUE(e.ok) << e.reason;
  EXPECT_EQ(e.code, code1 + "\n");
  e = extract_code("```cuda\n" + code1 + "<|user|>more");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, code1 + "\n");
}

TEST(Extract, NothingUsableIsNotOkWithAReason) {
  for (std::string s : {"", "   \n", "I cannot help with that.", "```cuda\n```",
                        "```python\nprint(1)\n```", "the solution is to add the vectors"}) {
    auto e = extract_code(s);
    EXPECT_FALSE(e.ok) << s;
    EXPECT_FALSE(e.reason.empty()) << s;
    EXPECT_TRUE(e.code.empty());
  }
}
