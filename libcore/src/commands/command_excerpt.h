// The excerpt of a command line that error messages quote (the first 120 bytes).
#pragma once

#include <string>
#include <string_view>

namespace trtllm_run {

// `text` whole when short, else its first 120 bytes followed by "...".
std::string CommandExcerpt(std::string_view text);

}  // namespace trtllm_run
