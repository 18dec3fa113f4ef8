// Limits on what trtllm-run reads from files that others write (request and cases files,
// the cluster catalog, slurm_env.json, perf configs, the files of a work dir): a file
// over its size limit is refused before its contents are read, and a YAML or JSON
// document may nest only so deep and, with YAML aliases, expand only so far. Every
// refusal is kInvalidInput (exit 2) naming the file and the limit.
#ifndef TRTLLM_RUN_SDK_INPUT_LIMITS_H_
#define TRTLLM_RUN_SDK_INPUT_LIMITS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// --request files, the cluster catalog (clusters.yaml) and slurm_env.json: 1 MiB.
inline constexpr std::size_t kMaxRequestFileBytes = std::size_t{1} << 20;
// --cases files and perf-sanity configs: 16 MiB.
inline constexpr std::size_t kMaxCasesFileBytes = std::size_t{16} << 20;
// What trtllm-run reads back from a work dir (job_spec.json, run_state.json,
// result.json): 16 MiB.
inline constexpr std::size_t kMaxWorkDirFileBytes = std::size_t{16} << 20;
// The deepest nesting of lists and mappings (JSON arrays and objects) in a document.
inline constexpr int kMaxNestingDepth = 100;
// The longest JSON number token (digits, sign, point, exponent). RapidJSON 1.1.0 (Debian
// 12) reads past its table of powers of ten on a long run of fractional zeros with a
// negative exponent ("0.000...0e-99", found by fuzzing); no input of trtllm-run has a
// number near this long.
inline constexpr std::size_t kMaxJsonNumberChars = 64;
// The most nodes a YAML document may have, counting each use of an alias (*name) as a
// copy of what it names: a few hundred bytes of nested aliases otherwise expand to
// billions of nodes for whoever walks the document.
inline constexpr std::size_t kMaxYamlNodes = 1000000;

// Reads the whole file at `path` if it holds at most `max_bytes`. A regular file that is
// larger is refused from its size before a byte is read; a pipe or a file that grows
// while read is refused once `max_bytes` + 1 bytes have come. The refusal is
// kInvalidInput "<what> '<path>' is N bytes, over the limit of M bytes"; a file that
// cannot be opened or read is kIoError as ReadFile.
TRTLLM_RUN_API Result<std::string> ReadFileLimited(const std::string& path, std::size_t max_bytes,
                                                   std::string_view what);

// The kInvalidInput refusal of a text of `size` bytes over `max_bytes`, for parsers given
// text rather than a file.
TRTLLM_RUN_API Status TooLarge(std::string_view what, const std::string& origin, std::size_t size,
                               std::size_t max_bytes);

// Ok when `text` is not YAML at all (its parser says so, with the position) or is a YAML
// document within kMaxNestingDepth and kMaxYamlNodes; otherwise kInvalidInput naming
// `origin` and the line where the limit was reached. For YAML readers outside libcore
// (plugins), before they convert the document.
TRTLLM_RUN_API Status CheckYamlLimits(const std::string& text, const std::string& origin);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_INPUT_LIMITS_H_
