#include "model/edit_distance.h"

#include <algorithm>
#include <climits>

namespace trtllm_run {
namespace {

// Past this length a name is not a typo of another one: no suggestion is computed, so a
// hostile name (a stage table is anyone's checkout) costs nothing.
constexpr std::size_t kMaxSuggestedNameLength = 256;

}  // namespace

std::size_t EditDistance(std::string_view a, std::string_view b) {
  // Three rows of the (|a|+1) x (|b|+1) table: the transposition looks two rows back.
  std::vector<std::size_t> two_back(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], two_back[j - 2] + 1);
      }
    }
    std::swap(two_back, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > kMaxSuggestedNameLength) return "";
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: a candidate that cannot be
    // within the limit is not compared.
    std::size_t length_gap = candidate.size() > word.size() ? candidate.size() - word.size()
                                                            : word.size() - candidate.size();
    if (length_gap > limit) continue;
    std::size_t distance = EditDistance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best_distance <= limit ? best : "";
}

}  // namespace trtllm_run
