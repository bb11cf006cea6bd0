// code_edit: a later turn's answer as edits of the previous turn's code instead of a whole new
// file. A small model that rewrites 300 tokens at temperature 1 to fix one line breaks other
// lines (docs/results.md, "The warm start: repair and RL, measured"); an edit names only what changes:
//
//   ```edit
//   <<<<<<< SEARCH
//   {lines of the previous code, exactly}
//   =======
//   {what replaces them}
//   >>>>>>> REPLACE
//   ```
//
// (one or more blocks, applied in order, each to the first place its SEARCH text occurs).
// render_edit makes the answer SFT trains on from a buggy file and its fix (a line diff, each
// SEARCH text widened by context lines until it occurs once); apply_edits turns a sampled
// answer back into the whole file the environment builds. Pure functions; any thread.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>

namespace leap::policy {

// The edit answer that turns `before` into `after` (both whole files); empty when they are the
// same file. Lines are compared exactly; the blocks cover every changed line once.
std::string render_edit(const std::string& before, const std::string& after);

// Whether `completion` holds at least one SEARCH/REPLACE block.
bool has_edits(std::string_view completion);

// `before` with the completion's blocks applied in order. An error (the answer's fault, shown to
// the model as feedback) names the block: no block, a block without its markers, or a SEARCH
// text that is not in the code. A SEARCH text that matches only when trailing whitespace of each
// line is ignored is accepted. The result ends with one '\n'.
result<std::string> apply_edits(const std::string& before, std::string_view completion);

} // namespace leap::policy
