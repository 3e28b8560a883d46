#pragma once
// Outputs are written to a temporary name in the destination folder and renamed into place, so a
// failed or interrupted run never leaves a half-written file where a good one was.
#include <filesystem>
#include <functional>
#include <string>

namespace dgrte::io {

// Calls write(tmp_path), then renames tmp_path to `target`. On any exception the temporary is
// removed and the exception propagates; `target` is untouched.
void write_atomically(const std::filesystem::path& target, const std::function<void(const std::filesystem::path&)>& write);
// Convenience: atomically writes a text file.
void write_text_atomically(const std::filesystem::path& target, const std::string& text);

}  // namespace dgrte::io
