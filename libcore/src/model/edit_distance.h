// Did-you-mean suggestions: the edit distance between two names and the candidate a
// mistyped name most plausibly meant (flags, subcommands, request keys).
#ifndef TRTLLM_RUN_MODEL_EDIT_DISTANCE_H_
#define TRTLLM_RUN_MODEL_EDIT_DISTANCE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trtllm_run {

// Optimal string alignment distance: Levenshtein plus adjacent transpositions. Time
// O(|a| * |b|), memory O(|b|).
std::size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is within max(2, |word| / 3) edits
// (ties: the first in `candidates`); "" for a `word` over 256 bytes. Candidates whose length
// is out of reach are skipped, so a long name in a table costs no comparison.
std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_EDIT_DISTANCE_H_
