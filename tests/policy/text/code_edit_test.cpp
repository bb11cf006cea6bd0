// Edit answers (policy/text/code_edit.hpp): render_edit of a buggy file and its fix, applied to the
// buggy file, gives the fix back (one-line fixes, several hunks, insertions, deletions, repeated
// lines that need context); apply_edits takes what a model writes (trailing whitespace, text
// around the block) and names the block it cannot apply.
#include "policy/text/code_edit.hpp"

#include <gtest/gtest.h>

using namespace leap::policy;

namespace {

const std::string kernel =
  "#include <cuda_runtime.h>\n"
  "__global__ void k(const float* x, float* y, int n) {\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) {\n"
  "    y[i] = x[i] > 0.f ? x[i] : 0.f;\n"
  "  }\n"
  "}\n"
  "extern \"C\" void solution(const float* x, float* y, int n) {\n"
  "  k<<<(n + 255) / 256, 256>>>(x, y, n);\n"
  "}\n";

std::string with(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

void round_trip(const std::string& before, const std::string& after) {
  const auto e = render_edit(before, after);
  ASSERT_TRUE(has_edits(e)) << e;
  auto back = apply_edits(before, e);
  ASSERT_TRUE(back.ok()) << back.message() << "\n" << e;
  EXPECT_EQ(*back, after) << e;
}

} // namespace

TEST(CodeEdit, AOneLineFixIsOneSmallBlock) {
  const auto buggy = with(kernel, "if (i < n)", "if (i <= n)");
  const auto e = render_edit(buggy, kernel);
  EXPECT_EQ(e, "```edit\n<<<<<<< SEARCH\n  if (i <= n) {\n=======\n  if (i < n) {\n>>>>>>> REPLACE\n```");
  round_trip(buggy, kernel);
}

TEST(CodeEdit, SeveralHunksInsertionsDeletionsAndRepeatedLines) {
  // Two separate slips.
  round_trip(with(with(kernel, "threadIdx.x;", "threadIdx.y;"), "x[i] : 0.f", "x[i] : 1.f"), kernel);
  // A deleted guard (the fix inserts lines), and its inverse.
  const auto unguarded = with(with(kernel, "  if (i < n) {\n", ""), "  }\n}\nextern", "}\nextern");
  round_trip(unguarded, kernel);
  round_trip(kernel, unguarded);
  // "  }\n" occurs twice: the block takes context until its SEARCH text occurs once.
  const auto twice = with(kernel, "  }\n}\nextern", "  }\n  }\n}\nextern");
  round_trip(twice, kernel);
  // Same file: no edit.
  EXPECT_EQ(render_edit(kernel, kernel), "");
  // A file without a final newline.
  round_trip(kernel.substr(0, kernel.size() - 1), with(kernel, "256>>>", "128>>>"));
}

TEST(CodeEdit, ApplyAcceptsWhatAModelWritesAndNamesTheBlockItCannotApply) {
  const std::string answer =
    "Fixed the bound:\n```edit\n<<<<<<< SEARCH\n  if (i <= n) {   \n=======\n  if (i < n) {\n"
    ">>>>>>> REPLACE\n```\n";
  auto fixed = apply_edits(with(kernel, "if (i < n)", "if (i <= n)"), answer);
  ASSERT_TRUE(fixed.ok()) << fixed.message();
  EXPECT_EQ(*fixed, kernel);

  auto missing = apply_edits(kernel, "<<<<<<< SEARCH\n  if (j < n) {\n=======\n  x\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("edit block 1"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("not in your previous code"), std::string::npos);

  auto second = apply_edits(kernel, "<<<<<<< SEARCH\n  if (i < n) {\n=======\n  if (i < n) {\n>>>>>>> REPLACE\n"
                                    "<<<<<<< SEARCH\n  y[i] = 1;\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find("edit block 2"), std::string::npos) << second.message();

  EXPECT_FALSE(apply_edits(kernel, "```cuda\nint x;\n```").ok());
  EXPECT_FALSE(has_edits("```cuda\nint x;\n```"));
  // A SEARCH text must start a line: "i < n" inside a line is no match for a line "i < n".
  EXPECT_FALSE(apply_edits(kernel, "<<<<<<< SEARCH\ni < n) {\n=======\nx\n>>>>>>> REPLACE\n").ok());
}
