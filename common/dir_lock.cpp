#include "common/dir_lock.hpp"

#include "common/strings.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace leap {

result<dir_lock> dir_lock::acquire(const std::string& dir, const std::string& what) {
  const std::string path = dir + "/.leap-lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("cannot lock " + dir + ": " + path + ": " + std::strerror(errno));
  const std::string pid_mark = "(PID " + std::to_string(::getpid()) + ")";
  // A lock this process held and released can outlive its dir_lock for a moment: a child forked
  // (by another thread) before the release holds a copy of the descriptor until its exec closes
  // it. So when the holder is this very process, wait for that, briefly (2 s at most).
  for (int attempt = 0; ::flock(fd, LOCK_EX | LOCK_NB) != 0; ++attempt) {
    int err = errno;
    char buf[256] = {};
    auto n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (err != EWOULDBLOCK) {
      ::close(fd);
      return make_error("cannot lock " + dir + ": " + std::strerror(err));
    }
    std::string owner = n > 0 ? std::string(trim(std::string(buf, static_cast<std::size_t>(n))))
                              : std::string("a process that has not written its PID yet");
    if (attempt < 100 && owner.find(pid_mark) != std::string::npos) {
      ::usleep(20 * 1000);
      continue;
    }
    ::close(fd);
    return make_error(dir + " is in use by " + owner + ": one run per directory (wait for it, "
                      "stop it, or choose another --out)");
  }
  std::string me = what + " " + pid_mark + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) < 0) {
    int err = errno;
    ::close(fd);
    return make_error("cannot write " + path + ": " + std::strerror(err));
  }
  return dir_lock(fd);
}

dir_lock::dir_lock(dir_lock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

dir_lock& dir_lock::operator=(dir_lock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

dir_lock::~dir_lock() {
  if (fd_ >= 0)
    ::close(fd_); // closing the last descriptor releases the flock
}

} // namespace leap
