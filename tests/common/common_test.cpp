// Unit tests of common/: SHA-256 against the FIPS 180-2 vectors, string helpers, atomic writes,
// the run-directory lock.
#include "common/dir_lock.hpp"
#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <filesystem>

using namespace leap;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  EXPECT_EQ(sha256_hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShotAndFieldsAreUnambiguous) {
  sha256 h;
  h.update("ab").update("c");
  EXPECT_EQ(h.hex_digest(), sha256_hex("abc"));
  EXPECT_NE(sha256{}.field("ab").field("c").hex_digest(),
            sha256{}.field("a").field("bc").hex_digest());
}

TEST(Strings, Helpers) {
  EXPECT_EQ(trim("  x y \n"), "x y");
  EXPECT_EQ(split_lines("a\nb\n").size(), 2u);
  EXPECT_EQ(join({"a", "b"}, ", "), "a, b");
  EXPECT_EQ(replace_all("/tmp/x/a.cu /tmp/x/b", "/tmp/x/", ""), "a.cu b");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("plain"), "plain");
  EXPECT_EQ(escape_xml("a<b & \"c\" 'd'"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;");
}

TEST(Fs, AtomicWriteAndTempDir) {
  auto dir = make_temp_dir(temp_root(), "leap-test-");
  ASSERT_TRUE(dir.ok()) << dir.message();
  auto path = *dir + "/f.txt";
  ASSERT_TRUE(write_file_atomic(path, "hello").ok());
  auto back = read_file(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "hello");
  EXPECT_FALSE(read_file(*dir + "/missing").ok());
  EXPECT_NE(read_file(*dir + "/missing").message().find("missing"), std::string::npos);
  std::filesystem::remove_all(*dir);
}

TEST(DirLock, OneOwnerAtATimeNamingTheHolderAndTakenOverWhenItsProcessDies) {
  auto dir = *leap::make_temp_dir(leap::temp_root(), "leap-lock-");
  {
    auto first = leap::dir_lock::acquire(dir, "leap train");
    ASSERT_TRUE(first) << first.message();
    auto second = leap::dir_lock::acquire(dir, "leap train");
    ASSERT_FALSE(second);
    EXPECT_NE(second.message().find("in use by leap train (PID " + std::to_string(::getpid()) + ")"),
              std::string::npos)
      << second.message();
  }
  // Released with its owner.
  {
    auto again = leap::dir_lock::acquire(dir, "leap train");
    EXPECT_TRUE(again) << again.message();
  }
  // A holder killed with SIGKILL leaves nothing to clean up: the lock is the kernel's.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    auto held = leap::dir_lock::acquire(dir, "child");
    char c = held ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_FALSE(leap::dir_lock::acquire(dir, "leap train"));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto taken = leap::dir_lock::acquire(dir, "leap train");
  EXPECT_TRUE(taken) << taken.message();
  ::close(ready[0]);
  ::close(ready[1]);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
