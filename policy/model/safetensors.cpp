// safetensors reader/writer: see safetensors.hpp. Format reference:
// https://github.com/huggingface/safetensors (header length u64 LE, JSON header, data section
// fully covered by the tensors' data_offsets, no overlaps, no holes).
#include "policy/model/safetensors.hpp"

#include "common/fs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes a little-endian host");

namespace leap::policy {
namespace {

using json = nlohmann::json;

constexpr std::size_t max_header_bytes = 100u << 20;  // same limit as the reference implementation

std::uint64_t read_u64_le(const char* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

// numel * itemsize with overflow detection; nullopt-like false on overflow.
bool checked_nbytes(const std::vector<std::int64_t>& shape, std::size_t itemsize, std::size_t& out) {
  std::size_t n = itemsize;
  for (auto d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(d)) return false;
    n *= static_cast<std::size_t>(d);
  }
  out = n;
  return true;
}

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

result<void> write_all(int fd, const void* data, std::size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return make_error(path + ": write failed: " + std::strerror(errno));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return {};
}

// Builds the header JSON and checks every view; `total` receives the data section size.
result<std::string> build_header(const std::vector<st_tensor_view>& tensors,
                                 const std::map<std::string, std::string>& metadata, std::size_t& total) {
  json h = json::object();
  if (!metadata.empty()) {
    json m = json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    h["__metadata__"] = m;
  }
  total = 0;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") {
      return make_error("safetensors write: invalid tensor name '" + t.name + "'");
    }
    if (h.contains(t.name)) return make_error("safetensors write: duplicate tensor name '" + t.name + "'");
    std::size_t expect = 0;
    if (!checked_nbytes(t.shape, st_dtype_size(t.dtype), expect)) {
      return make_error("safetensors write: tensor '" + t.name + "' has an invalid shape " + shape_str(t.shape));
    }
    if (expect != t.nbytes) {
      return make_error("safetensors write: tensor '" + t.name + "' shape " + shape_str(t.shape) + " " +
                        st_dtype_name(t.dtype) + " needs " + std::to_string(expect) + " bytes, got " +
                        std::to_string(t.nbytes));
    }
    if (t.nbytes > 0 && t.data == nullptr) {
      return make_error("safetensors write: tensor '" + t.name + "' has no data");
    }
    h[t.name] = {{"dtype", st_dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {total, total + t.nbytes}}};
    total += t.nbytes;
  }
  std::string text = h.dump();
  // Pad so the data section starts 8-byte aligned (the reference writer does the same).
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');
  return text;
}

} // namespace

const char* st_dtype_name(st_dtype d) {
  switch (d) {
    case st_dtype::f32: return "F32";
    case st_dtype::f16: return "F16";
    case st_dtype::bf16: return "BF16";
    case st_dtype::i64: return "I64";
    case st_dtype::i32: return "I32";
  }
  return "?";
}

std::size_t st_dtype_size(st_dtype d) {
  switch (d) {
    case st_dtype::f32: return 4;
    case st_dtype::f16: return 2;
    case st_dtype::bf16: return 2;
    case st_dtype::i64: return 8;
    case st_dtype::i32: return 4;
  }
  return 0;
}

result<st_dtype> st_dtype_from_name(std::string_view name) {
  for (auto d : {st_dtype::f32, st_dtype::f16, st_dtype::bf16, st_dtype::i64, st_dtype::i32}) {
    if (name == st_dtype_name(d)) return d;
  }
  return make_error("unsupported dtype '" + std::string(name) + "' (supported: F32, F16, BF16, I64, I32)");
}

std::int64_t st_entry::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

result<st_file> st_file::parse(std::string bytes, const std::string& source) {
  auto fail = [&](const std::string& what) { return make_error(source + ": " + what); };
  if (bytes.size() < 8) {
    return fail("file too short for a safetensors header (" + std::to_string(bytes.size()) + " bytes)");
  }
  const std::uint64_t n = read_u64_le(bytes.data());
  if (n > max_header_bytes) return fail("header length " + std::to_string(n) + " exceeds the 100 MiB limit");
  if (n > bytes.size() - 8) {
    return fail("header length " + std::to_string(n) + " runs past the end of the file (" +
                std::to_string(bytes.size()) + " bytes)");
  }
  json h = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), nullptr, false);
  if (h.is_discarded()) return fail("header is not valid JSON");
  if (!h.is_object()) return fail("header is not a JSON object");

  st_file f;
  f.data_start_ = 8 + static_cast<std::size_t>(n);
  const std::size_t data_size = bytes.size() - f.data_start_;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return fail("__metadata__ must be an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) return fail("__metadata__ value for '" + m.key() + "' is not a string");
        f.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    auto bad = [&](const std::string& what) { return fail("tensor '" + name + "': " + what); };
    if (!v.is_object()) return bad("entry is not an object");
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) return bad("missing or non-string dtype");
    if (sh == v.end() || !sh->is_array()) return bad("missing or non-array shape");
    if (off == v.end() || !off->is_array() || off->size() != 2) return bad("data_offsets must be [begin, end]");
    auto dtype = st_dtype_from_name(dt->get<std::string>());
    if (!dtype) return bad(dtype.message());
    st_entry e;
    e.dtype = *dtype;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) return bad("shape " + sh->dump() + " must hold non-negative integers");
      if (d.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return bad("shape dimension too large");
      }
      e.shape.push_back(d.get<std::int64_t>());
    }
    for (const auto& o : *off) {
      if (!o.is_number_unsigned()) return bad("data_offsets " + off->dump() + " must be non-negative integers");
    }
    const std::uint64_t b = (*off)[0].get<std::uint64_t>(), en = (*off)[1].get<std::uint64_t>();
    if (b > en) return bad("data_offsets " + off->dump() + " has begin > end");
    if (en > data_size) {
      return bad("data_offsets " + off->dump() + " run past the data section (" + std::to_string(data_size) +
                 " bytes)");
    }
    std::size_t expect = 0;
    if (!checked_nbytes(e.shape, st_dtype_size(e.dtype), expect)) return bad("shape size overflows");
    if (en - b != expect) {
      return bad("shape " + shape_str(e.shape) + " " + st_dtype_name(e.dtype) + " needs " + std::to_string(expect) +
                 " bytes but data_offsets " + off->dump() + " span " + std::to_string(en - b));
    }
    e.begin = static_cast<std::size_t>(b);
    e.end = static_cast<std::size_t>(en);
    f.entries_.emplace(name, std::move(e));
  }
  // The data section must be covered exactly: no overlaps, no holes.
  std::vector<std::pair<std::size_t, const std::string*>> order;
  for (const auto& [name, e] : f.entries_) order.emplace_back(e.begin, &name);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return f.entries_.at(*a.second).end < f.entries_.at(*b.second).end;
  });
  std::size_t pos = 0;
  for (const auto& [begin, name] : order) {
    const st_entry& e = f.entries_.at(*name);
    if (begin < pos) return fail("tensor '" + *name + "' overlaps the previous tensor's bytes");
    if (begin > pos) {
      return fail("hole in the data section before tensor '" + *name + "' (bytes " + std::to_string(pos) + ".." +
                  std::to_string(begin) + " unused)");
    }
    pos = e.end;
  }
  if (pos != data_size) {
    return fail("data section has " + std::to_string(data_size - pos) + " trailing bytes not covered by any tensor");
  }
  f.buffer_ = std::move(bytes);
  return f;
}

result<st_file> st_file::read(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.err();
  return parse(std::move(*bytes), path);
}

const st_entry* st_file::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string_view st_file::bytes(const st_entry& e) const {
  return std::string_view(buffer_).substr(data_start_ + e.begin, e.end - e.begin);
}

result<std::vector<float>> st_file::to_f32(const std::string& name) const {
  const st_entry* e = find(name);
  if (!e) return make_error("no tensor named '" + name + "'");
  auto raw = bytes(*e);
  std::vector<float> out(static_cast<std::size_t>(e->numel()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (e->dtype == st_dtype::f32) {
      std::memcpy(&out[i], raw.data() + 4 * i, 4);
    } else if (e->dtype == st_dtype::f16 || e->dtype == st_dtype::bf16) {
      std::uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      out[i] = e->dtype == st_dtype::f16 ? f16_to_f32(h) : bf16_to_f32(h);
    } else {
      return make_error("tensor '" + name + "' has integer dtype " + st_dtype_name(e->dtype));
    }
  }
  return out;
}

result<std::string> serialize_safetensors(const std::vector<st_tensor_view>& tensors,
                                          const std::map<std::string, std::string>& metadata) {
  std::size_t total = 0;
  auto header = build_header(tensors, metadata, total);
  if (!header) return header.err();
  std::string out;
  out.reserve(8 + header->size() + total);
  const std::uint64_t n = header->size();
  out.append(reinterpret_cast<const char*>(&n), 8);
  out += *header;
  for (const auto& t : tensors) out.append(static_cast<const char*>(t.data), t.nbytes);
  return out;
}

result<void> write_safetensors(const std::string& path, const std::vector<st_tensor_view>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  std::size_t total = 0;
  auto header = build_header(tensors, metadata, total);
  if (!header) return header.err();
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp.%016llx", os_random_u64());
  const std::string tmp = path + suffix;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(tmp + ": cannot create: " + std::strerror(errno));
  auto finish = [&](result<void> r) -> result<void> {
    if (r && ::fsync(fd) != 0) r = make_error(tmp + ": fsync failed: " + std::strerror(errno));
    if (::close(fd) != 0 && r) r = make_error(tmp + ": close failed: " + std::strerror(errno));
    if (r && std::rename(tmp.c_str(), path.c_str()) != 0) {
      r = make_error(path + ": rename failed: " + std::strerror(errno));
    }
    if (!r) std::remove(tmp.c_str());
    return r;
  };
  const std::uint64_t n = header->size();
  if (auto r = write_all(fd, &n, 8, tmp); !r) return finish(r);
  if (auto r = write_all(fd, header->data(), header->size(), tmp); !r) return finish(r);
  for (const auto& t : tensors) {
    if (auto r = write_all(fd, t.data, t.nbytes, tmp); !r) return finish(r);
  }
  return finish({});
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal
    return sign ? -v : v;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t f32_to_f16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t mant = x & 0x7fffffu;
  const std::int32_t exp = static_cast<std::int32_t>((x >> 23) & 0xffu);
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const std::int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const std::uint32_t shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // a carry may round up to inf
  return static_cast<std::uint16_t>(half);
}

std::uint16_t f32_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

} // namespace leap::policy
