// Text for the HTML report (html_text.h).
#include "report/html_text.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "model/utf8.h"

namespace trtllm_run::report {

namespace {

void AppendHexEscape(std::string* out, unsigned value) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\x%02x", value & 0xFFu);
  out->append(buffer);
}

}  // namespace

std::string HtmlText(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        case '\n':
        case '\t':
          out += static_cast<char>(c);
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            AppendHexEscape(&out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const std::size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      AppendHexEscape(&out, static_cast<unsigned char>(text[i + 1]));  // C1 control
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string CutText(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t end = max_bytes;
  // Back to the start of the sequence that holds byte `end` (continuation bytes: 10xxxxxx).
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "...";
}

std::string Number(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string DurationText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  char buffer[64];
  if (seconds < 60) {
    std::snprintf(buffer, sizeof(buffer), "%.1f s", seconds);
  } else if (seconds < 3600) {
    const long total = std::lround(seconds);
    std::snprintf(buffer, sizeof(buffer), "%ld min %02ld s", total / 60, total % 60);
  } else {
    const long minutes = std::lround(seconds / 60);
    std::snprintf(buffer, sizeof(buffer), "%ld h %02ld min", minutes / 60, minutes % 60);
  }
  return buffer;
}

std::optional<double> ParseIsoUtc(std::string_view text) {
  std::string value(text.substr(0, 64));
  std::tm parts{};
  int consumed = 0;
  if (std::sscanf(value.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &parts.tm_year, &parts.tm_mon,
                  &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  if (parts.tm_mon < 1 || parts.tm_mon > 12 || parts.tm_mday < 1 || parts.tm_mday > 31 ||
      parts.tm_hour > 23 || parts.tm_min > 59 || parts.tm_sec > 60) {
    return std::nullopt;
  }
  double fraction = 0;
  std::size_t at = 19;
  if (at < value.size() && value[at] == '.') {
    double scale = 0.1;
    for (++at; at < value.size() && value[at] >= '0' && value[at] <= '9'; ++at) {
      fraction += (value[at] - '0') * scale;
      scale /= 10;
    }
  }
  if (at < value.size() && value[at] == 'Z') ++at;
  if (at != value.size()) return std::nullopt;
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<double>(timegm(&parts)) + fraction;
}

}  // namespace trtllm_run::report
