// Unicode NFC (canonical composition) for the tokenizer's `NFC` normalizer, done by utf8proc
// (Debian's libutf8proc), never by hand. Pure; callable from any thread.
#pragma once

#include <string>
#include <string_view>

namespace leap::policy {

// `text` in Normalization Form C. Works on arbitrary bytes: each maximal run of valid UTF-8 is
// normalised, and bytes that are not valid UTF-8 are copied unchanged (they are no characters, so
// nothing composes across them). ASCII-only text is returned as is without calling utf8proc.
std::string to_nfc(std::string_view text);

// The Unicode version of the normalisation tables (utf8proc's), e.g. "15.0.0".
const char* nfc_unicode_version();

} // namespace leap::policy
