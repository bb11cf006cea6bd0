// Checkpoint integrity without LibTorch: a checkpoint directory's files checked against its
// manifest.json (written last by save_checkpoint, policy/model/checkpoint.hpp). The loaders of
// checkpoint.hpp call it for the files they read; commands that read a checkpoint's JSON or
// tokenizer themselves call it too. Also the promotion of a staged checkpoint into place.
// Free functions; any thread.
#pragma once

#include "common/result.hpp"

#include <string>
#include <vector>

namespace leap::policy {

// The files of a checkpoint that save_checkpoint writes (and lists in its manifest).
const std::vector<std::string>& checkpoint_files();

// Checks the named files (checkpoint_files() when `names` is empty) against <dir>/manifest.json;
// the error names the damaged file and what is wrong with it. A checkpoint without a manifest
// passes with a warning on stderr (once per directory). A named file that does not exist passes
// (its loader reports it missing). A file verified before by this process, unchanged since (size
// and modification times), is not read again.
result<void> verify_checkpoint(const std::string& dir, const std::vector<std::string>& names = {});

// A checkpoint pinned by the SHA-256 of its manifest.json (64 lower-case hex digits), e.g. the
// warm start shipped in the repository: the manifest must exist and hash to `pinned_sha256`, and
// every file it lists must match it. Any other checkpoint under the same path, a rebuilt one or
// a damaged one is an error that names the directory, both hashes and how to renew the pin.
result<void> verify_pinned_checkpoint(const std::string& dir, const std::string& pinned_sha256);

// "<dir>/tokenizer.json" if present and intact, else an error.
result<std::string> checkpoint_tokenizer_path(const std::string& dir);

// Moves a whole checkpoint directory `staged` (one save_checkpoint wrote) to `dir`, replacing
// the one there: the old one is moved aside first and removed once the new one is in place.
// `leap train` stages the learner's periodic checkpoints this way and promotes each only after
// that step's metrics line is written, so a kill never leaves a checkpoint ahead of the log.
result<void> promote_checkpoint(const std::string& staged, const std::string& dir);

} // namespace leap::policy
