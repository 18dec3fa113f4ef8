// Reading shell command lines without running them: a quote-aware tokenizer that keeps
// byte offsets (so parts of a command can be cut out or rewritten byte for byte), the
// top-level `&&` split of bench chains, the options of the last trtllm-bench /
// trtllm-eval invocation (their sizing inputs), the perf-sanity test id grammar, and HuggingFace
// model ids. Nothing is expanded: `$VAR`, `$(...)` and backticks stay literal text.
#ifndef TRTLLM_RUN_SDK_COMMANDS_COMMAND_PARSE_H_
#define TRTLLM_RUN_SDK_COMMANDS_COMMAND_PARSE_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct ShellToken {
  enum Kind { kWord, kOperator };
  Kind kind = kWord;
  // kWord: the word with quotes removed (no expansion); kOperator: one of "&&", "||",
  // "|", "|&", ";", ";;", "&", "\n", "(", ")".
  std::string text;
  size_t begin = 0;  // byte range of the token in the command
  size_t end = 0;
  int depth = 0;  // nesting in ( ) subshells and { } groups; 0 = top level
};

// Splits `command` into words and control operators. `#` at the start of a word starts
// a comment; backslash-newline joins lines; `$(...)`, `${...}`, `$((...))` and backticks
// (with the quotes inside them) belong to the word they appear in; `>&`, `<&`, `&>`
// are redirections, not `&`. kInvalidInput for an unterminated quote or substitution.
TRTLLM_RUN_API Result<std::vector<ShellToken>> TokenizeShell(std::string_view command);

// Splits on the `&&` operators at the top level only (not inside quotes, substitutions,
// subshells or groups). Each part is the original text, trimmed of blanks; a command
// without a top-level `&&` is one part.
TRTLLM_RUN_API Result<std::vector<std::string>> SplitTopLevelAnd(std::string_view command);

// True when `text` is one bare test id rather than a command: a pytest node id (a path
// ending in .py with optional ::parts and [parameters], which may hold blanks) or a
// perf-sanity id (test_e2e[...]).
TRTLLM_RUN_API bool IsBareTestId(std::string_view text);

// A plain case list's line as a test_cmd: a bare test id or any other single word becomes
// `pytest '<id>'` (perf-sanity ids `pytest 'perf/test_perf_sanity.py::<id>'`); a line
// with blanks outside an id's [parameters] is a command and returned as it is.
TRTLLM_RUN_API std::string TestCommandForId(const std::string& id);

// One program invocation inside a command: the words from the program word to the end
// of its simple command.
struct TRTLLM_RUN_API Invocation {
  std::vector<ShellToken> words;  // words[0] is the program
  // The value of the last `--name V` or `--name=V` among `names`, or nullopt.
  std::optional<std::string> Option(std::initializer_list<std::string_view> names) const;
  bool HasWord(std::string_view word) const;
};

// The last invocation of `program` (matched on the word's basename, so
// /usr/bin/trtllm-bench counts) anywhere in `command`, e.g. after `mpirun -n 2` or a
// launcher. nullopt when there is none or the command does not tokenize.
TRTLLM_RUN_API std::optional<Invocation> LastInvocation(std::string_view command,
                                                        std::string_view program);

// Inserts `word ` before the program word of the last invocation of `program`, unless a
// word with basename `word` already comes before it in the same simple command.
// Returns the command unchanged when `program` does not occur.
TRTLLM_RUN_API std::string PrefixInvocation(std::string_view command, std::string_view program,
                                            std::string_view word);

// Rewrites the value of every `--name V` / `--name=V` (name among `names`) whose value
// is exactly `old_value` to `new_value` (shell-quoted). Other bytes are unchanged.
TRTLLM_RUN_API std::string ReplaceOptionValue(std::string_view command,
                                              std::initializer_list<std::string_view> names,
                                              std::string_view old_value,
                                              std::string_view new_value);

// trtllm-eval's sizing inputs (spec 001 Step 3, Eval).
struct EvalArgs {
  int tp_size = 1;
  int pp_size = 1;
  std::optional<int> gpus_per_node;
  std::optional<std::string> model;
  std::string task;  // the positional task (gsm8k, mmlu, ...), "" when not found
  int world_size() const { return tp_size * pp_size; }
};

// Parses the last `trtllm-eval` invocation of `eval_cmd`. kInvalidInput when the
// command has no trtllm-eval, or a size option is not a positive integer.
TRTLLM_RUN_API Result<EvalArgs> ParseEvalCommand(std::string_view eval_cmd);

// trtllm-bench's sizing inputs (spec 001 Step 3, Bench), of its last invocation.
struct BenchArgs {
  int tp = 1;
  int pp = 1;
  int ep = 0;  // expert parallelism: adds no GPUs
  // The spelling each size was given in ("--tp", "--tp_size", ...), for notes; "" when
  // the default applies.
  std::string tp_option, pp_option, ep_option;
  int world_size() const { return tp * pp; }
};

// Parses the last `trtllm-bench` invocation of `bench_cmd`. Each size has two spellings,
// both accepted as `--name V` and `--name=V`: --tp or --tp_size (--tp-size), --pp or
// --pp_size (--pp-size), --ep or --ep_size (--ep-size); TensorRT-LLM's own docs use both.
// kInvalidInput when the command has no trtllm-bench, a size is not a positive integer
// (ep: non-negative), or two spellings of one size give different values.
TRTLLM_RUN_API Result<BenchArgs> ParseBenchCommand(std::string_view bench_cmd);

// A perf-sanity test id (spec-notes "Facts about the real TensorRT-LLM tree").
struct PerfSanityId {
  std::string test_string;            // the word holding test_e2e[...], for submit.py --test-list
  std::string id;                     // the text inside the brackets
  std::string prefix;                 // aggr, aggr_upload, disagg, disagg_upload
  std::string config;                 // config file base name (no .yaml)
  std::string select;                 // aggregated: server_configs[].name to run; "" = every entry
  std::string mode;                   // "" (aggregated), "ctx_only", "e2e" or "gen_only"
  bool disaggregated_config = false;  // the config lives in the disaggregated folder
};

// Finds `test_e2e[<id>]` in `test_cmd` and parses the id. nullopt when there is none;
// kInvalidInput naming the id and the accepted forms when it breaks the grammar.
TRTLLM_RUN_API Result<std::optional<PerfSanityId>> FindPerfSanityId(std::string_view test_cmd);

// True for a HuggingFace model id: contains '/', does not start with '/', '.' or '~'.
TRTLLM_RUN_API bool IsHuggingFaceId(std::string_view model);

// The shallowest directory under `root` (at most `max_depth` levels down; name order
// within a level) whose name equals the last component of `model_id`, ignoring case.
// Unreadable directories are skipped. nullopt when none matches.
TRTLLM_RUN_API std::optional<std::string> FindModelDirectory(const std::string& root,
                                                             std::string_view model_id,
                                                             int max_depth = 3);

// Model path resolution of spec 001 Step 3 (Eval; used for bench too): a HuggingFace id
// is looked up under `llm_models_root` when that directory exists on this host, then
// under the host `models_path` (a match there is given as the same path below
// llm_models_root, where the job sees it, or as the host path when llm_models_root is
// empty). `path` is empty when `model` is not an HF id or nothing matched; `note` says
// what happened, starting with "warning:" when the HF download will be attempted.
struct ModelResolution {
  std::string path;
  std::string note;
};
TRTLLM_RUN_API ModelResolution ResolveHuggingFaceModel(std::string_view model,
                                                       const std::string& llm_models_root,
                                                       const std::string& models_path);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_COMMANDS_COMMAND_PARSE_H_
