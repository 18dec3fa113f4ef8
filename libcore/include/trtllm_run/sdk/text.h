// Text helpers shared by workflows and executors: joining, trimming and integer parsing,
// shell quoting and splitting, time limits, model names, atomic files.
#ifndef TRTLLM_RUN_SDK_TEXT_H_
#define TRTLLM_RUN_SDK_TEXT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// `items` with `separator` between each two ("" for no items).
TRTLLM_RUN_API std::string Join(const std::vector<std::string>& items, std::string_view separator);

// `text` without its leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
// The view points into `text`.
TRTLLM_RUN_API std::string_view Trim(std::string_view text);

// `text` with ASCII letters lowered (AsciiLower) or raised (AsciiUpper); other bytes,
// UTF-8 included, unchanged. Independent of the C locale.
TRTLLM_RUN_API std::string AsciiLower(std::string_view text);
TRTLLM_RUN_API std::string AsciiUpper(std::string_view text);

// A blank: space, \t, \n or \r (the separators of shell words, test ids and config
// values). IsBlank(text): `text` holds nothing else (true for "").
TRTLLM_RUN_API bool IsBlank(char c);
TRTLLM_RUN_API bool IsBlank(std::string_view text);

// The words of `text`: the runs of characters between ASCII whitespace.
TRTLLM_RUN_API std::vector<std::string> SplitWhitespace(std::string_view text);

// True for a shell identifier (an environment variable name): [A-Za-z_][A-Za-z0-9_]*.
TRTLLM_RUN_API bool IsShellIdentifier(std::string_view name);

// The whole of `text` as a decimal integer in [minimum, maximum]: digits with a leading
// '-' only when minimum < 0; no sign '+', no whitespace, nothing after the digits (trim
// first where blanks are allowed). nullopt when it is not such a number or out of range
// (also on overflow).
TRTLLM_RUN_API std::optional<long long> ParseInteger(std::string_view text, long long minimum,
                                                     long long maximum);

// Quotes `word` for POSIX sh so that it is one word with exactly these bytes.
TRTLLM_RUN_API std::string ShellQuote(std::string_view word);

// `text` for an error message or a terminal: newline, tab and carriage return as \n, \t,
// \r; other control bytes, DEL and bytes >= 0x80 that are not UTF-8 as \xNN, so input
// cannot move the cursor, recolour the terminal or forge lines of the message.
TRTLLM_RUN_API std::string EscapeControl(std::string_view text);

// Splits like sh does for simple words: whitespace separates, '...' and "..." and
// backslash quote. No expansion. Unterminated quotes are kInvalidInput.
TRTLLM_RUN_API Result<std::vector<std::string>> SplitShellWords(std::string_view text);

// Parses custom_env: space-separated KEY=VALUE pairs (values may be quoted). Keys must be
// shell identifiers. `field` names the input in errors.
TRTLLM_RUN_API Result<std::vector<EnvVar>> ParseEnvAssignments(std::string_view text,
                                                               std::string_view field);

// monitor_timeout to seconds: "1h", "30m", "3600s", "1h30m" (units h, m, s in that order,
// each once), "HH:MM:SS", or a bare number of seconds. Must be > 0. Errors name the value and the
// accepted forms.
TRTLLM_RUN_API Result<int> ParseDurationSeconds(std::string_view text, std::string_view field);

// Model name for job and directory names: the last path component, lower-cased, every
// run of characters outside [a-z0-9] turned into one '_', trimmed of '_'
// ("Llama-3.1-8B-Instruct" -> "llama_3_1_8b_instruct"). Empty when nothing is left.
TRTLLM_RUN_API std::string SanitizeModelName(std::string_view raw);

// Writes `contents` to `path` atomically: a temp file in the same directory, then a
// rename; readers see the old file or the new one, never a part. On any failure the old
// file (if any) is untouched and no temp file remains. Durability: when `path` already
// exists, the new contents and the rename are fsynced, so an OS crash leaves the old or
// the new version; a new file (or one this process created with WriteFileAtomic and
// rewrites) is not synced: after an OS crash it may be missing or empty, having had no
// synced version to lose.
TRTLLM_RUN_API Status WriteFileAtomic(const std::string& path, std::string_view contents);

// Reads a whole file.
TRTLLM_RUN_API Result<std::string> ReadFile(const std::string& path);

// Current UTC time as ISO 8601 ("2026-11-29T12:00:00Z").
TRTLLM_RUN_API std::string NowIso8601();

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_TEXT_H_
