// The MCP server's tools (schemas.h lists them): plan_case, run_case, run_cases, run_stage
// (this file's tools.cc), wait_case, case_status, cancel_case, case_log, list_cases and
// probe_slurm (tools_watch.cc), test_history and flaky_tests (tools_history.cc). A tool never
// blocks longer than its own bound (100 s at most) and keeps nothing in memory between calls: every
// answer is read from the work dirs, so another server (or the CLI) sees the same.
#ifndef TRTLLM_RUN_APPS_MCP_TOOLS_H_
#define TRTLLM_RUN_APPS_MCP_TOOLS_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.h"
#include "trtllm_run/request.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run::mcp {

struct ToolsOptions {
  // The trtllm-run binary run as supervisor (`exec`, `run --cases`, `stage`) and for
  // `env`. Empty: run_case, run_cases, run_stage and probe_slurm fail (cancel_case and the
  // state tools call the library: workdir_cancel.h, workdir_state.h).
  std::string trtllm_run;
  // Passed on to those commands: "--plugin-dir" DIR pairs, and the catalog file.
  std::vector<std::string> plugin_dirs;
  std::string clusters_file;
  // The history the commands record in and the history tools read: {"--history", STORE},
  // {"--no-history"}, or empty (the user's default). Given to exec, run, stage and history.
  std::vector<std::string> history_args;
};

// How a tool call talks back while it runs (the server implements it per call).
class CallContext {
 public:
  virtual ~CallContext() = default;
  // Sleeps up to `seconds`; false when the call was cancelled (notifications/cancelled)
  // or the server is shutting down: the tool should answer with what it has.
  virtual bool Sleep(double seconds) = 0;
  virtual bool cancelled() const = 0;
  // Sends notifications/progress when the request asked for it; a no-op otherwise.
  // `progress` must grow from call to call.
  virtual void Progress(double progress, std::optional<double> total,
                        const std::string& message) = 0;
};

struct ToolOutcome {
  bool is_error = false;
  std::string text;                      // content[0].text
  std::unique_ptr<Document> structured;  // structuredContent (null on errors)
};

class Tools {
 public:
  // `runtime` (not owned) plans cases; calls into it are serialized.
  Tools(Runtime* runtime, ToolsOptions options);

  // Runs the tool; `arguments` is an object. Unknown tools are the server's business
  // (schemas.h FindTool); bad arguments are a tool error.
  ToolOutcome Call(std::string_view tool, const Value& arguments, CallContext& context);

 private:
  ToolOutcome PlanCase(const Value& args);
  ToolOutcome RunCase(const Value& args, CallContext& context);
  ToolOutcome RunCasesTool(const Value& args, CallContext& context);
  ToolOutcome RunStage(const Value& args, CallContext& context);
  ToolOutcome WaitCase(const Value& args, CallContext& context);
  ToolOutcome CaseStatus(const Value& args);
  ToolOutcome CancelCase(const Value& args, CallContext& context);
  ToolOutcome CaseLog(const Value& args);
  ToolOutcome PerfCompare(const Value& args);
  ToolOutcome ListCasesTool(const Value& args);
  ToolOutcome ProbeSlurm(const Value& args);
  ToolOutcome TestHistory(const Value& args);  // tools_history.cc
  ToolOutcome FlakyTests(const Value& args);

  // The trtllm-run argv prefix for a subcommand with the plugin options.
  std::vector<std::string> Command(const std::string& subcommand, bool plugin_options) const;

  Runtime* runtime_;
  ToolsOptions options_;
  std::mutex runtime_mu_;
};

// Helpers shared by the tool files.

// "trtllm-run <subcommand>: error: <message>\n  hint: <hint>" as the CLI prints it (control
// bytes escaped), as a tool error, with the request fields' flags named as the agent gives
// them (ArgumentsForFlags): an agent calls tools with arguments and has no flags.
ToolOutcome ToolError(const std::string& subcommand, const Status& status);

// `text` with every request-field flag ("--scenario", "-p/--partition") named as its tool
// argument ("argument 'scenario'"), so that a message core words for the CLI points an
// agent at what it can change. Left as is: a flag followed by '=' (a command line's
// "--partition=batch"), text between backticks (a command to type), and flags that are
// no request field (--clusters: the server's own).
std::string ArgumentsForFlags(const std::string& text);

// A successful outcome: `structured` and its short text.
ToolOutcome ToolResult(Document structured, std::string text);

// The request fields among `args` (the names that are not the tool's own options),
// each set through SetRequestField as the CLI sets its flags, so a bad value gets the
// CLI's check, named by its field name, which is the argument's ("skip_install must be
// true or false"; the CLI adds "(from --skip-install)"). An unknown name is an error
// with the nearest of the tool's argument names. Passwords are refused.
Status RequestFromArguments(std::string_view tool, const Value& args, CaseRequest* request);

// Runs a command here until `seconds` pass (the local scenario's deadline: SIGTERM, then
// SIGKILL, to its process group; timed_out); stdout and stderr captured.
Result<CommandOutput> RunBounded(const std::vector<std::string>& argv, double seconds);

// Argument getters; the values were checked against the schema (CheckToolArguments).
std::string StringArg(const Value& args, const char* name, const std::string& fallback = "");
double NumberArg(const Value& args, const char* name, double fallback);

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_TOOLS_H_
