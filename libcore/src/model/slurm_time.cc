#include "model/slurm_time.h"

#include <cstdio>

#include "slurm/client/slurm_records.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

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
