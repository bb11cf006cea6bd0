// GPT-2 byte-level alphabet: the reversible map from each of the 256 byte values to one printable
// Unicode character, used to spell byte-level BPE tokens inside tokenizer.json ("Ġ" is a space).
// Pure functions over immutable tables; callable from any thread.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>

namespace leap::policy {

// UTF-8 spelling of the character that stands for byte `b`.
const std::string& byte_symbol(unsigned char b);
// Spells raw bytes as byte-level symbols (what tokenizer.json stores).
std::string bytes_to_symbols(std::string_view bytes);
// Inverse of bytes_to_symbols; an error when `symbols` holds a character outside the alphabet.
result<std::string> symbols_to_bytes(std::string_view symbols);

} // namespace leap::policy
