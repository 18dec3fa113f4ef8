// Job logs are outside input too: PatternScanner on any bytes, any patterns and any
// chunking must report exactly the first case-insensitive match of each pattern.
// Input layout: [pattern count byte][chunk size byte] then, per pattern, [length byte]
// [bytes]; the rest is the log.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "trtllm_run/sdk/supervise/log_follower.h"

namespace {

unsigned char FoldCase(unsigned char c) {
  return static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

std::optional<std::uint64_t> ReferenceFind(std::string_view text, const std::string& pattern) {
  if (pattern.empty() || text.size() < pattern.size()) return std::nullopt;
  for (std::size_t i = 0; i + pattern.size() <= text.size(); ++i) {
    std::size_t k = 0;
    while (k < pattern.size() && FoldCase(static_cast<unsigned char>(text[i + k])) ==
                                     FoldCase(static_cast<unsigned char>(pattern[k]))) {
      ++k;
    }
    if (k == pattern.size()) return i;
  }
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = trtllm_run_fuzz::AsText(data, size);
  if (input.size() < 2) return 0;
  std::size_t count = 1 + static_cast<unsigned char>(input[0]) % 4;
  std::size_t chunk = 1 + static_cast<unsigned char>(input[1]);
  input.remove_prefix(2);
  std::vector<std::string> patterns;
  for (std::size_t p = 0; p < count && !input.empty(); ++p) {
    std::size_t length = static_cast<unsigned char>(input[0]) % 41;  // 0: an empty pattern
    input.remove_prefix(1);
    length = std::min(length, input.size());
    patterns.emplace_back(input.substr(0, length));
    input.remove_prefix(length);
  }
  trtllm_run::PatternScanner scanner(patterns);
  for (std::size_t pos = 0; pos < input.size(); pos += chunk) {
    scanner.Feed(input.substr(pos, chunk));
  }
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    std::optional<std::uint64_t> want = ReferenceFind(input, patterns[i]);
    const trtllm_run::PatternMatch* got = scanner.FindMatch(i);
    FUZZ_CHECK(want.has_value() == (got != nullptr));
    if (got != nullptr) {
      FUZZ_CHECK(got->offset == *want);
      FUZZ_CHECK(got->line.size() <= 4096 + patterns[i].size());
    }
  }
  return 0;
}
