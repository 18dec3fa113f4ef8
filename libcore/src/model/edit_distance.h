// Did-you-mean suggestions: the edit distance between two names and the candidate a
// mistyped name most plausibly meant (flags, subcommands, request keys).
#ifndef TRTLLM_RUN_MODEL_EDIT_DISTANCE_H_
#define TRTLLM_RUN_MODEL_EDIT_DISTANCE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trtllm_run {

// Optimal string alignment distance: Levenshtein plus adjacent transpositions.
std::size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is within max(2, |word| / 3) edits
// (ties: the first in `candidates`).
std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_EDIT_DISTANCE_H_
