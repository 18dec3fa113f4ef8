// Shared pieces of the trtllm-run subcommands: option groups, parsing, error reporting.
// Each subcommand lives in its own cmd_<name>.cc and is listed in main.cc's table.
#ifndef TRTLLM_RUN_APPS_CLI_H_
#define TRTLLM_RUN_APPS_CLI_H_

#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <string>

#include "trtllm_run/request.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/status.h"

namespace trtllm_run::cli {

namespace po = boost::program_options;

// Subcommand entry points: argv[0] is the subcommand name; returns the exit code.
int RunMain(int argc, char** argv);
int PluginsMain(int argc, char** argv);
int PlanMain(int argc, char** argv);
int ExecMain(int argc, char** argv);
int StatusMain(int argc, char** argv);
int AttachMain(int argc, char** argv);
int CancelMain(int argc, char** argv);
int ReleaseMain(int argc, char** argv);
int EnvMain(int argc, char** argv);
int McpMain(int argc, char** argv);
int ListMain(int argc, char** argv);
int LogsMain(int argc, char** argv);

// The directory of a `run --cases` run (cases_dir.h) for status / attach / cancel, and
// `plan --cases FILE` (cmd_cases.cc).
int CasesDirStatus(const std::string& dir, bool json);
int CasesDirAttach(const std::string& dir, bool json, double poll);
int CasesDirCancel(const std::string& dir, double wait, int kill_grace);
int PlanCasesMain(const po::variables_map& vm, const CaseRequest& shared);

// Prints "trtllm-run <subcommand>: error: <status>" and returns its exit code (2 for
// bad input and unknown names, 3 otherwise).
int Fail(const std::string& subcommand, const Status& status);

// kInvalidInput unless `path` can be written as a report file (`flag` names it): it is a
// regular file or absent, in an existing writable directory.
Status CheckOutputFile(const std::string& path, const std::string& flag);

// Prints a usage error with a pointer to --help; returns 2.
int UsageError(const std::string& subcommand, const std::string& message);

// --plugin-dir, accepted by every subcommand that loads plugins.
po::options_description PluginOptions();

// One flag per CaseRequest field (--custom-cmd, ...) plus --request FILE.
po::options_description CaseOptions();

// The request from --request FILE overlaid with the case flags given.
Result<CaseRequest> RequestFromOptions(const po::variables_map& vm);

// A runtime over the built-in plugins, $TRTLLM_RUN_PLUGIN_PATH and --plugin-dir.
Result<std::unique_ptr<Runtime>> MakeRuntime(const po::variables_map& vm);

// "warning: ..." on stderr for each plugin that failed to load.
void PrintPluginProblems(const Registry& registry);

// RunOptions for a case this process supervises: job output on stdout (on stderr with
// --json, so that stdout holds only the JSON), status lines on stderr.
RunOptions TerminalRunOptions(const po::variables_map& vm, CancellationToken* cancel,
                              int kill_grace_seconds);

// The end of a single-case run: the summary on stderr, --junit FILE, --json on stdout.
// Returns the verdict's exit code (a failed --junit write is reported, not fatal).
int ReportResult(const std::string& subcommand, const po::variables_map& vm,
                 const RunResult& result);

// Parses argv against `visible` (plus --help). Returns an exit code when parsing ended
// the command (--help: 0, an error: 2); nullopt to go on.
std::optional<int> Parse(const std::string& subcommand, int argc, char** argv,
                         const po::options_description& visible, po::variables_map* vm);

}  // namespace trtllm_run::cli

#endif  // TRTLLM_RUN_APPS_CLI_H_
