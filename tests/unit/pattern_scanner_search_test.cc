// PatternScanner's search against a plain reference: random logs built from the patterns'
// own bytes in mixed case (many near misses), random patterns (letters, digits, blanks,
// punctuation, bytes >= 0x80; lengths 1..40), fed in random chunks from 1 byte to more
// than the 16-byte blocks the vectorized search tests at once. Every first match must be
// found at the reference's offset, and nothing else.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "trtllm_run/sdk/supervise/log_follower.h"

namespace trtllm_run {
namespace {

unsigned char FoldCase(unsigned char c) {
  return static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

// The first offset of `pattern` in `text`, ASCII case-insensitive.
std::optional<std::uint64_t> ReferenceFind(const std::string& text, const std::string& pattern) {
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

std::string FlipCase(std::string s, std::mt19937* rng) {
  for (char& c : s) {
    if ((*rng)() % 2 == 0) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return s;
}

void CheckAgainstReference(const std::vector<std::string>& patterns, const std::string& text,
                           std::mt19937* rng, std::size_t max_chunk) {
  PatternScanner scanner(patterns);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t n = std::min(text.size() - pos, 1 + (*rng)() % max_chunk);
    scanner.Feed(std::string_view(text).substr(pos, n));
    pos += n;
  }
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    std::optional<std::uint64_t> want = ReferenceFind(text, patterns[i]);
    const PatternMatch* got = scanner.FindMatch(i);
    INFO("pattern " << i << " '" << patterns[i] << "' in " << text.size()
                    << " bytes, chunks <= " << max_chunk);
    if (want.has_value()) {
      REQUIRE(got != nullptr);
      CHECK(got->offset == *want);
    } else {
      CHECK(got == nullptr);
    }
  }
}

TEST_CASE("PatternScanner finds exactly the reference's first matches, any chunking",
          "[log][scanner]") {
  std::mt19937 rng(20261129);
  const std::string alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .:/_-=[]()'\"\t\x80\xe2\xff";
  for (int round = 0; round < 300; ++round) {
    // Patterns from the whole alphabet; text mostly from the patterns' own pieces, so
    // that partial matches and the rare bytes the search filters on are frequent.
    std::vector<std::string> patterns;
    int count = 1 + static_cast<int>(rng() % 4);
    for (int p = 0; p < count; ++p) {
      std::size_t length = 1 + rng() % (rng() % 4 == 0 ? 40 : 12);
      std::string pattern;
      for (std::size_t k = 0; k < length; ++k) pattern += alphabet[rng() % alphabet.size()];
      patterns.push_back(pattern);
    }
    std::string text;
    std::size_t size = rng() % 3 == 0 ? rng() % 64 : rng() % 6000;
    while (text.size() < size) {
      switch (rng() % 4) {
        case 0: {  // a piece of a pattern, any case
          const std::string& p = patterns[rng() % patterns.size()];
          std::size_t from = rng() % p.size();
          text += FlipCase(p.substr(from, 1 + rng() % (p.size() - from)), &rng);
          break;
        }
        case 1:  // rarely, a whole pattern
          if (rng() % 8 == 0) text += FlipCase(patterns[rng() % patterns.size()], &rng);
          break;
        default:
          text += alphabet[rng() % alphabet.size()];
          break;
      }
    }
    for (std::size_t max_chunk : {std::size_t{1}, std::size_t{7}, std::size_t{40}, std::size_t{300},
                                  std::size_t{1} << 16}) {
      CheckAgainstReference(patterns, text, &rng, max_chunk);
    }
  }
}

TEST_CASE("PatternScanner finds a match in the last bytes of a long chunk at every alignment",
          "[log][scanner]") {
  // The vectorized search handles blocks of 16 starts and leaves the rest to a byte loop:
  // a match must be found wherever it falls relative to those blocks.
  const std::string pattern = "Hang Detected";
  for (std::size_t size = pattern.size(); size < 120; ++size) {
    for (std::size_t at = 0; at + pattern.size() <= size; ++at) {
      std::string text(size, 'x');
      text.replace(at, pattern.size(), "hAnG dEtEcTeD");
      if (at >= 3) text.replace(at - 3, 3, "ang");  // a near miss right before
      PatternScanner scanner({"hang detected"});
      scanner.Feed(text);
      const PatternMatch* match = scanner.first_match();
      INFO("size " << size << ", match at " << at);
      REQUIRE(match != nullptr);
      CHECK(match->offset == at);
    }
  }
}

TEST_CASE("PatternScanner tells letters from the bytes that differ from them by 0x20",
          "[log][scanner]") {
  // Case folding applies to A-Z only: '@' (0x40) is not '`' (0x60), '[' is not '{', and
  // 0xC7 is not 0xE7, even though each pair differs only in bit 0x20.
  std::string text(64, '.');
  text += "@[\xc7 `{\xe7 ";
  text += std::string(64, '.');
  PatternScanner scanner({"`{\xe7", "@[\xc7", "@{", "[\xe7"});
  scanner.Feed(text);
  REQUIRE(scanner.FindMatch(0) != nullptr);
  CHECK(scanner.FindMatch(0)->offset == 68);
  REQUIRE(scanner.FindMatch(1) != nullptr);
  CHECK(scanner.FindMatch(1)->offset == 64);
  CHECK(scanner.FindMatch(2) == nullptr);
  CHECK(scanner.FindMatch(3) == nullptr);
}

}  // namespace
}  // namespace trtllm_run
