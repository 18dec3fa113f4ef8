#include "model/slurm_time.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace {

std::optional<int> ParseInt(std::string_view text) {
  std::optional<long long> value = ParseInteger(Trim(text), -99999999, 999999999);
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

}  // namespace

std::optional<int> ParseSlurmDuration(std::string_view text) {
  text = Trim(text);
  std::string upper = AsciiUpper(text);
  if (text.empty() || upper == "UNLIMITED" || upper == "INFINITE" || upper == "N/A") {
    return std::nullopt;
  }
  long days = 0;
  std::size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    std::optional<int> d = ParseInt(text.substr(0, dash));
    if (!d || *d < 0) return std::nullopt;
    days = *d;
    text = text.substr(dash + 1);
  }
  std::vector<int> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t colon = text.find(':', start);
    std::optional<int> part = ParseInt(text.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (!part || *part < 0) return std::nullopt;
    parts.push_back(*part);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  long seconds = 0;
  if (dash != std::string_view::npos) {
    // days-hours[:minutes[:seconds]]
    static const int kUnits[] = {3600, 60, 1};
    if (parts.size() > 3) return std::nullopt;
    for (std::size_t i = 0; i < parts.size(); ++i)
      seconds += static_cast<long>(parts[i]) * kUnits[i];
  } else if (parts.size() == 1) {
    seconds = static_cast<long>(parts[0]) * 60;  // minutes
  } else if (parts.size() == 2) {
    seconds = static_cast<long>(parts[0]) * 60 + parts[1];  // minutes:seconds
  } else if (parts.size() == 3) {
    seconds = static_cast<long>(parts[0]) * 3600 + parts[1] * 60L + parts[2];
  } else {
    return std::nullopt;
  }
  seconds += days * 86400;
  if (seconds > 0x7fffffff) return std::nullopt;
  return static_cast<int>(seconds);
}

std::string FormatSlurmTime(int seconds) {
  char text[32];
  int days = seconds / 86400, rest = seconds % 86400;
  if (days > 0) {
    std::snprintf(text, sizeof(text), "%d-%02d:%02d:%02d", days, rest / 3600, rest / 60 % 60,
                  rest % 60);
  } else {
    std::snprintf(text, sizeof(text), "%02d:%02d:%02d", rest / 3600, rest / 60 % 60, rest % 60);
  }
  return text;
}

Result<std::string> NormalizeSlurmTime(std::string_view text, std::string_view field) {
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  const std::string value(s);
  auto invalid = [&](const std::string& why) {
    return Status::InvalidInput(
        "invalid " + std::string(field) + " '" + std::string(text) + "': " + why,
        "give a duration like 2h, 90m, 3600s or HH:MM:SS, or a Slurm time (D-HH:MM:SS, "
        "MM:SS, a bare number of minutes, UNLIMITED)");
  };
  if (value == "UNLIMITED" || value == "infinite" || value == "INFINITE") return value;
  if (value.empty()) return invalid("the value is empty");
  const char unit = value.back();
  if (unit == 'h' || unit == 'm' || unit == 's') {
    Result<int> seconds = ParseDurationSeconds(value, field);
    if (!seconds.ok()) return invalid("not a duration");
    if (seconds.value() <= 0) return invalid("a time limit must be positive");
    return FormatSlurmTime(seconds.value());
  }
  for (char c : value) {
    if (!(c >= '0' && c <= '9') && c != ':' && c != '-') {
      return invalid("not a duration or a Slurm time");
    }
  }
  std::optional<int> seconds = ParseSlurmDuration(value);
  if (!seconds || value.front() == ':' || value.back() == ':' || value.front() == '-') {
    return invalid("not a duration or a Slurm time");
  }
  if (*seconds <= 0) return invalid("a time limit must be positive");
  return value;
}

}  // namespace trtllm_run
