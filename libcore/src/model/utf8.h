// Private: the one UTF-8 well-formedness rule of libcore's text checks.
#ifndef TRTLLM_RUN_MODEL_UTF8_H_
#define TRTLLM_RUN_MODEL_UTF8_H_

#include <cstddef>
#include <string_view>

namespace trtllm_run {

// The length (1-4) of the well-formed UTF-8 sequence at text[i], or 0 when the bytes there
// are not one (a stray continuation byte, a truncated sequence, an overlong form, a
// surrogate, a code point above U+10FFFF). Requires i < text.size().
inline std::size_t Utf8SequenceLength(std::string_view text, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  const std::size_t length = c < 0x80           ? 1
                             : (c >> 5) == 0x6  ? 2
                             : (c >> 4) == 0xE  ? 3
                             : (c >> 3) == 0x1E ? 4
                                                : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  }
  const unsigned char c1 = length > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
  if (length == 2 && c < 0xC2) return 0;  // overlong
  if (length == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
  if (length == 4 && ((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90))) {
    return 0;
  }
  return length;
}

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_UTF8_H_
