// CI's rerun policy (rerun_policy.h).
#include "stage/rerun_policy.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace stage {
namespace {

constexpr double kTwoRerunsUpToSeconds = 5 * 60;
constexpr double kOneRerunUpToSeconds = 10 * 60;
constexpr std::size_t kMaxSignaturesFileBytes = 1u << 20;
constexpr std::size_t kMaxSignatureBytes = 4096;

}  // namespace

std::string DurationWords(double seconds) {
  long whole = seconds > 0 ? std::lround(seconds) : 0;
  if (whole < 60) return std::to_string(whole) + " s";
  long minutes = whole / 60;
  long rest = whole % 60;
  std::string words = std::to_string(minutes) + " min";
  if (rest != 0) words += " " + std::to_string(rest) + " s";
  return words;
}

RerunDecision DecideReruns(FirstRun first_run, double seconds, std::string_view failure_text,
                           const std::vector<std::string>& signatures) {
  switch (first_run) {
    case FirstRun::kUnfinished:
      return {0, "not eligible for rerun: it was running when its pytest process ended"};
    case FirstRun::kNotRun:
      return {1, "rerun 1 time: listed but never run (its shard ended before it started)"};
    case FirstRun::kFailed:
      break;
  }
  std::string ran = DurationWords(seconds);
  if (seconds <= kTwoRerunsUpToSeconds) {
    return {2, "rerun 2 times: failed after " + ran + " (<= 5 min)"};
  }
  if (seconds <= kOneRerunUpToSeconds) {
    return {1, "rerun 1 time: failed after " + ran + " (5-10 min)"};
  }
  std::string haystack = AsciiLower(failure_text);
  for (const std::string& signature : signatures) {
    if (signature.empty()) continue;
    if (haystack.find(AsciiLower(signature)) != std::string::npos) {
      return {1, "rerun 1 time: ran " + ran + ", failure matches signature \"" + signature + "\""};
    }
  }
  return {0, "not eligible for rerun: ran " + ran + ", no matching failure signature"};
}

Result<std::vector<std::string>> ReadFailureSignatures(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return Status::NotFound("--rerun-signatures: " + path + " does not exist",
                            "give a text file with one failure signature per line");
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::InvalidInput("--rerun-signatures: " + path + " is not a file");
  }
  if (static_cast<std::size_t>(info.st_size) > kMaxSignaturesFileBytes) {
    return Status::InvalidInput("--rerun-signatures: " + path + " is " +
                                std::to_string(info.st_size) + " bytes, above the limit of " +
                                std::to_string(kMaxSignaturesFileBytes));
  }
  auto text = ReadFile(path);
  if (!text.ok()) return text.status().WithContext("--rerun-signatures");
  std::vector<std::string> signatures;
  std::size_t start = 0;
  int line_number = 0;
  while (start <= text->size()) {
    std::size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    ++line_number;
    std::string line = text->substr(start, end - start);
    start = end + 1;
    if (line.find('\0') != std::string::npos) {
      return Status::InvalidInput("--rerun-signatures: " + path + ": line " +
                                      std::to_string(line_number) + " holds a NUL byte",
                                  "a signatures file is text, one signature per line");
    }
    std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    std::size_t last = line.find_last_not_of(" \t\r");
    line = line.substr(first, last - first + 1);
    if (line[0] == '#') continue;
    if (line.size() > kMaxSignatureBytes) {
      return Status::InvalidInput("--rerun-signatures: " + path + ": line " +
                                  std::to_string(line_number) + " is " +
                                  std::to_string(line.size()) + " bytes, above the limit of " +
                                  std::to_string(kMaxSignatureBytes));
    }
    signatures.push_back(std::move(line));
  }
  return signatures;
}

}  // namespace stage
}  // namespace trtllm_run
