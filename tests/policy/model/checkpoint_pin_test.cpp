// A checkpoint pinned by its manifest's SHA-256 (policy/model/checkpoint_verify.hpp, the shipped warm
// start's check): the pinned one passes; another checkpoint under the same path, a damaged file,
// a missing manifest and a file the manifest does not list are each refused with the reason.
#include "common/file_manifest.hpp"
#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "policy/model/checkpoint_verify.hpp"

#include <gtest/gtest.h>

#include <filesystem>

using namespace leap;
namespace fs = std::filesystem;

namespace {

struct pinned_dir {
  std::string path = *make_temp_dir(temp_root(), "leap-ckpt-pin-");
  ~pinned_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // Writes the files and their manifest; returns the manifest's SHA-256 (the pin).
  std::string write(const std::string& weights) {
    EXPECT_TRUE(write_file_atomic(path + "/config.json", "{\"d_model\": 32}\n").ok());
    EXPECT_TRUE(write_file_atomic(path + "/model.safetensors", weights).ok());
    EXPECT_TRUE(write_manifest(path, {"config.json", "model.safetensors"}).ok());
    return sha256_hex(*read_file(path + "/manifest.json"));
  }
};

} // namespace

TEST(CheckpointPin, ThePinnedCheckpointPasses) {
  pinned_dir d;
  auto pin = d.write("weights-a");
  auto v = policy::verify_pinned_checkpoint(d.path, pin);
  EXPECT_TRUE(v.ok()) << v.message();
}

TEST(CheckpointPin, AnotherCheckpointUnderThePathIsRefused) {
  pinned_dir d;
  auto pin = d.write("weights-a");
  auto other = d.write("weights-b");  // rebuilt: a complete, intact, different checkpoint
  ASSERT_NE(pin, other);
  auto v = policy::verify_pinned_checkpoint(d.path, pin);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("not the pinned one"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find(other), std::string::npos) << v.message();
  EXPECT_NE(v.message().find(pin), std::string::npos) << v.message();
}

TEST(CheckpointPin, AFileChangedBehindTheManifestIsRefused) {
  pinned_dir d;
  auto pin = d.write("weights-a");
  ASSERT_TRUE(write_file_atomic(d.path + "/model.safetensors", "weights-A").ok());  // same size
  auto v = policy::verify_pinned_checkpoint(d.path, pin);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("model.safetensors"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("damaged"), std::string::npos) << v.message();
}

TEST(CheckpointPin, AMissingManifestOrFileIsRefused) {
  pinned_dir d;
  auto pin = d.write("weights-a");
  fs::remove(d.path + "/config.json");
  auto v = policy::verify_pinned_checkpoint(d.path, pin);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("config.json"), std::string::npos) << v.message();
  fs::remove(d.path + "/manifest.json");
  v = policy::verify_pinned_checkpoint(d.path, pin);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("manifest.json"), std::string::npos) << v.message();
}
