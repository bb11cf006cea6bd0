// NFC through utf8proc: normalise each run of valid UTF-8, copy invalid bytes through.
#include "policy/text/unicode_normalize.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

namespace leap::policy {
namespace {

struct free_deleter {
  void operator()(utf8proc_uint8_t* p) const { std::free(p); }
};

const utf8proc_uint8_t* bytes(std::string_view s, std::size_t at) {
  return reinterpret_cast<const utf8proc_uint8_t*>(s.data() + at);
}

// Appends the NFC form of `run` (valid UTF-8) to `out`.
void append_nfc(std::string_view run, std::string& out) {
  bool ascii = true;
  for (unsigned char c : run) ascii = ascii && c < 0x80;
  if (ascii) {
    out.append(run);
    return;
  }
  utf8proc_uint8_t* raw = nullptr;
  utf8proc_ssize_t n = utf8proc_map(bytes(run, 0), static_cast<utf8proc_ssize_t>(run.size()), &raw,
                                    static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::unique_ptr<utf8proc_uint8_t, free_deleter> owned(raw);
  if (n < 0 || !raw) {
    // Only an allocation failure can get here (the run is valid UTF-8): keep the text as it is.
    out.append(run);
    return;
  }
  out.append(reinterpret_cast<const char*>(raw), static_cast<std::size_t>(n));
}

} // namespace

std::string to_nfc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t run_start = 0, i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t len = utf8proc_iterate(bytes(text, i),
                                            static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    if (len > 0) {
      i += static_cast<std::size_t>(len);
      continue;
    }
    // Not valid UTF-8 at i: normalise the run before it, copy the byte.
    append_nfc(text.substr(run_start, i - run_start), out);
    out.push_back(text[i]);
    run_start = ++i;
  }
  append_nfc(text.substr(run_start), out);
  return out;
}

const char* nfc_unicode_version() { return utf8proc_unicode_version(); }

} // namespace leap::policy
