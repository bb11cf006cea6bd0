#include "common/fs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace leap {

result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(path + ": cannot open for reading: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return make_error(path + ": read failed");
  return ss.str();
}

unsigned long long os_random_u64() {
  std::random_device rd;
  return (static_cast<unsigned long long>(rd()) << 32) ^ rd();
}

result<void> write_file_atomic(const std::string& path, std::string_view content) {
  auto tmp = path + ".tmp." + std::to_string(os_random_u64());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return make_error(tmp + ": cannot open for writing: " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return make_error(tmp + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error(path + ": cannot rename temporary file into place: " + ec.message());
  }
  return {};
}

std::string temp_root() {
  if (const char* t = std::getenv("TMPDIR"); t && *t)
    return t;
  return "/tmp";
}

result<std::string> make_temp_dir(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec)
    return make_error(parent + ": cannot create directory: " + ec.message());
  std::string templ = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    return make_error(templ + ": mkdtemp failed: " + std::strerror(errno));
  return std::string(buf.data());
}

} // namespace leap
