// Tests of NFC (utf8proc) and of the tokenizer's NFC normalizer: composition, canonical ordering,
// exclusions, Hangul, invalid bytes passed through, and added tokens matched before normalising.
#include "policy/text/byte_level.hpp"
#include "policy/text/pretokenize.hpp"
#include "policy/text/tokenizer.hpp"
#include "policy/text/unicode_normalize.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace leap::policy;

TEST(Nfc, ComposesCanonicalSequences) {
  EXPECT_EQ(to_nfc("cafe\xCC\x81"), "caf\xC3\xA9");                 // e + U+0301 -> é
  EXPECT_EQ(to_nfc("A\xCC\x8A"), "\xC3\x85");                       // A + ring -> Å
  EXPECT_EQ(to_nfc("\xE2\x84\xAB"), "\xC3\x85");                    // U+212B ANGSTROM SIGN -> Å
  EXPECT_EQ(to_nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81"); // jamo -> 각
  // Canonical ordering: dot below (ccc 220) before circumflex (ccc 230), then composition.
  EXPECT_EQ(to_nfc("e\xCC\x82\xCC\xA3"), to_nfc("e\xCC\xA3\xCC\x82"));
  EXPECT_EQ(to_nfc("e\xCC\xA3\xCC\x82"), "\xE1\xBB\x87");           // ệ
}

TEST(Nfc, KeepsExclusionsAndComposedTextAsIs) {
  // U+0958 DEVANAGARI QA is a composition exclusion: NFC is the decomposed pair.
  EXPECT_EQ(to_nfc("\xE0\xA5\x98"), "\xE0\xA4\x95\xE0\xA4\xBC");
  const std::string composed = "caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9";
  EXPECT_EQ(to_nfc(composed), composed);
  EXPECT_EQ(to_nfc("plain ASCII\r\n\t"), "plain ASCII\r\n\t");
  EXPECT_EQ(to_nfc(""), "");
  EXPECT_EQ(to_nfc(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(Nfc, PassesInvalidUtf8ThroughAndNormalisesAroundIt) {
  EXPECT_EQ(to_nfc("e\xCC\x81\xFF" "e\xCC\x81"), "\xC3\xA9\xFF\xC3\xA9");
  EXPECT_EQ(to_nfc("\xC3"), "\xC3");                 // truncated sequence
  EXPECT_EQ(to_nfc("\xED\xA0\x80x"), "\xED\xA0\x80x"); // an encoded surrogate is not UTF-8
  EXPECT_STRNE(nfc_unicode_version(), "");
}

namespace {

// Bytes as ids 0..255, merge "é" (C3 A9) -> 256, one special token "<s\xCC\x81>" (with a combining
// mark, to show added tokens are matched before normalisation), NFC normalizer or none.
std::string nfc_json(bool nfc) {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_symbol(static_cast<unsigned char>(b))] = b;
  vocab[byte_symbol(0xC3) + byte_symbol(0xA9)] = 256;
  nlohmann::ordered_json j = {
      {"added_tokens", {{{"id", 257}, {"content", "<s\xCC\x81>"}, {"special", true}}}},
      {"normalizer", nfc ? nlohmann::ordered_json{{"type", "NFC"}} : nlohmann::ordered_json()},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"use_regex", false}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"},
        {"vocab", vocab},
        {"merges", {byte_symbol(0xC3) + " " + byte_symbol(0xA9)}}}}};
  return j.dump();
}

} // namespace

TEST(Nfc, TokenizerNormalizesBetweenAddedTokens) {
  auto with = tokenizer::from_json(nfc_json(true));
  ASSERT_TRUE(with.ok()) << with.message();
  auto without = tokenizer::from_json(nfc_json(false));
  ASSERT_TRUE(without.ok()) << without.message();
  EXPECT_EQ(with->encode("e\xCC\x81"), std::vector<int>{256});
  EXPECT_EQ(with->encode("e\xCC\x81"), with->encode("\xC3\xA9"));
  EXPECT_EQ(without->encode("e\xCC\x81"), (std::vector<int>{'e', 0xCC, 0x81}));
  // The added token is found in the raw text; the text around it is normalised on its own.
  EXPECT_EQ(with->encode("e\xCC\x81<s\xCC\x81>e\xCC\x81"), (std::vector<int>{256, 257, 256}));
  EXPECT_EQ(with->decode(with->encode("cafe\xCC\x81")), "caf\xC3\xA9");
  // Saved and loaded, the normalizer is kept.
  auto again = tokenizer::from_json(with->to_json());
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->encode("e\xCC\x81"), std::vector<int>{256});
}
