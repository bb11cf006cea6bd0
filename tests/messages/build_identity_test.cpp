// The build identity a head and a node exchange: what the hash covers, and the refusal text.
#include "messages/build_identity.hpp"
#include "messages/type_ids.hpp"

#include <gtest/gtest.h>

#include <regex>

using namespace leap;

TEST(BuildIdentity, SignatureListsEveryMessageTypeWithItsFieldTypes) {
  auto sig = msg::message_signature();
  // One line per registered type and atom, in type-id order.
  auto lines = std::count(sig.begin(), sig.end(), '\n');
  EXPECT_EQ(lines, caf::id_block::leap::end - caf::id_block::leap::begin);
  // A request's fields, in order: id, task, source, backend (a checked enum byte), reference.
  EXPECT_NE(sig.find("leap_compile_request:u64,str,str,{leap_backend:u8,},bool,"),
            std::string::npos)
    << sig;
  // Nested messages are described inside their container's line.
  EXPECT_NE(sig.find("leap_node_exec_reply:{leap_exec_reply:u64,{leap_verdict:"), std::string::npos)
    << sig;
  EXPECT_NE(sig.find("vec<str>"), std::string::npos);
}

TEST(BuildIdentity, HashIsStableWithinABuildAndSixteenHexDigits) {
  auto a = msg::this_build_identity();
  auto b = msg::this_build_identity();
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_TRUE(std::regex_match(a.messages, std::regex("[0-9a-f]{16}"))) << a.messages;
  EXPECT_FALSE(a.version.empty());
}

TEST(BuildIdentity, MismatchNamesBothVersions) {
  msg::build_identity ours{"0.2.0", "00000000000000aa"};
  EXPECT_FALSE(msg::identity_mismatch(ours, ours));
  msg::build_identity theirs{"0.1.9", "00000000000000bb"};
  auto why = msg::identity_mismatch(ours, theirs);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("0.2.0"), std::string::npos) << *why;
  EXPECT_NE(why->find("0.1.9"), std::string::npos) << *why;
  // Same version, other messages (a locally modified build): refused too.
  auto modified = msg::identity_mismatch(ours, {"0.2.0", "00000000000000cc"});
  ASSERT_TRUE(modified);
  EXPECT_NE(modified->find("00000000000000cc"), std::string::npos) << *modified;
}

// Every float crosses as its IEEE bits (messages/float_inspect.hpp; a bare float field does not
// compile): CAF 0.17's own float encoding hangs on an infinity.
TEST(BuildIdentity, FloatFieldsTravelAsTheirBits) {
  auto sig = msg::message_signature();
  EXPECT_NE(sig.find("{leap_f64:u64,}"), std::string::npos) << sig;
  EXPECT_NE(sig.find("{leap_f64_vec:vec<u64>,}"), std::string::npos) << sig;
  EXPECT_NE(sig.find("{leap_f32_vec:vec<u32>,}"), std::string::npos) << sig;
  EXPECT_NE(sig.find("{leap_float_vecs:vec<vec<u64>>,}"), std::string::npos) << sig;
  EXPECT_FALSE(std::regex_search(sig, std::regex("f(32|64)[,>]"))) << sig;
}
