// Command-line text from users and request files: SplitShellWords, ShellQuote,
// ParseEnvAssignments (custom_env), ParseDurationSeconds (monitor_timeout),
// FindModelArgument and SanitizeModelName (model names from commands), and the
// workflows' command analysis (command_parse.h): TokenizeShell, SplitTopLevelAnd,
// LastInvocation, PrefixInvocation, ReplaceOptionValue, ParseEvalCommand,
// ParseBenchCommand, FindPerfSanityId.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/commands/derive.h"
#include "trtllm_run/sdk/text.h"

namespace {

using trtllm_run::Result;

std::string JoinQuoted(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) {
    if (!out.empty()) out += ' ';
    out += trtllm_run::ShellQuote(word);
  }
  return out;
}

bool IsIdentifier(const std::string& name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(i > 0 && digit)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));

  // Quoting any bytes gives one word with exactly those bytes back.
  Result<std::vector<std::string>> quoted =
      trtllm_run::SplitShellWords(trtllm_run::ShellQuote(text));
  FUZZ_CHECK(quoted.ok());
  FUZZ_CHECK(quoted.value().size() == 1 && quoted.value()[0] == text);

  // Splitting, quoting each word and splitting again gives the same words.
  Result<std::vector<std::string>> words = trtllm_run::SplitShellWords(text);
  if (words.ok()) {
    Result<std::vector<std::string>> again = trtllm_run::SplitShellWords(JoinQuoted(words.value()));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again.value() == words.value());
  } else {
    FUZZ_CHECK(!words.status().message().empty());
  }

  Result<std::vector<trtllm_run::EnvVar>> env = trtllm_run::ParseEnvAssignments(text, "custom_env");
  if (env.ok()) {
    for (const trtllm_run::EnvVar& var : env.value()) FUZZ_CHECK(IsIdentifier(var.name));
  } else {
    FUZZ_CHECK(env.status().message().find("custom_env") != std::string::npos);
  }

  Result<int> seconds = trtllm_run::ParseDurationSeconds(text, "monitor_timeout");
  if (seconds.ok()) {
    FUZZ_CHECK(seconds.value() > 0);
  } else {
    FUZZ_CHECK(seconds.status().message().find("monitor_timeout") != std::string::npos);
  }

  Result<std::vector<trtllm_run::ShellToken>> tokens = trtllm_run::TokenizeShell(text);
  if (tokens.ok()) {
    for (const trtllm_run::ShellToken& token : tokens.value()) {
      FUZZ_CHECK(token.begin <= token.end && token.end <= text.size());
      FUZZ_CHECK(token.depth >= 0);
    }
  }
  Result<std::vector<std::string>> parts = trtllm_run::SplitTopLevelAnd(text);
  if (parts.ok()) {
    for (const std::string& part : parts.value()) FUZZ_CHECK(part.size() <= text.size());
  }
  std::optional<trtllm_run::Invocation> bench = trtllm_run::LastInvocation(text, "trtllm-bench");
  if (bench) {
    FUZZ_CHECK(!bench->words.empty());
    (void)bench->Option({"--model", "--model_path"});
  }
  std::string prefixed = trtllm_run::PrefixInvocation(text, "trtllm-bench", "nsys");
  FUZZ_CHECK(bench.has_value() || prefixed == text);
  (void)trtllm_run::ReplaceOptionValue(text, {"--model", "-m"}, "/models/a", "/m b/c");
  Result<trtllm_run::EvalArgs> eval = trtllm_run::ParseEvalCommand(text);
  if (eval.ok()) FUZZ_CHECK(eval.value().tp_size > 0 && eval.value().pp_size > 0);
  Result<trtllm_run::BenchArgs> sizes = trtllm_run::ParseBenchCommand(text);
  if (sizes.ok()) {
    FUZZ_CHECK(sizes.value().tp > 0 && sizes.value().pp > 0 && sizes.value().ep >= 0);
  } else {
    FUZZ_CHECK(sizes.status().message().find("bench_cmd") != std::string::npos);
  }
  (void)trtllm_run::FindPerfSanityId(text);
  (void)trtllm_run::IsHuggingFaceId(text);

  std::optional<std::string> model = trtllm_run::FindModelArgument(text);
  std::string sanitized = trtllm_run::SanitizeModelName(model ? *model : text);
  for (char c : sanitized) FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  FUZZ_CHECK(sanitized.empty() || (sanitized.front() != '_' && sanitized.back() != '_'));
  FUZZ_CHECK(sanitized.find("__") == std::string::npos);
  return 0;
}
