// The history tools: test_history (`trtllm-run history NAME --json`) and flaky_tests
// (`trtllm-run history flaky --json`), run as the CLI against the server's history (its
// --history / --no-history, else the user's default), so an agent and a person read the
// same answer (docs/history.md "JSON").
#include <string>
#include <vector>

#include "tools.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::mcp {
namespace {

constexpr double kHistorySeconds = 60;

// Runs `history` with `args` and puts its JSON answer in structuredContent; its exit-2/3
// message (unknown name, no store, history off) is the tool error.
ToolOutcome RunHistory(const ToolsOptions& options, const std::vector<std::string>& args,
                       const std::string& what) {
  if (options.trtllm_run.empty()) {
    return ToolError("history",
                     Status::ExecutionError("this server cannot run trtllm-run history"));
  }
  std::vector<std::string> argv = {options.trtllm_run, "history"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), options.history_args.begin(), options.history_args.end());
  argv.push_back("--json");
  Result<CommandOutput> ran = RunBounded(argv, kHistorySeconds);
  if (!ran.ok()) return ToolError("history", ran.status());
  Document doc;
  if (ran->exit_code != 0 || !ParseInto(ran->stdout_text, doc.GetAllocator(), &doc) ||
      !doc.IsObject()) {
    // The CLI's own message, without its "trtllm-run history: error: " prefix.
    std::string why = ValidUtf8(ran->stderr_text);
    const std::string prefix = "trtllm-run history: error: ";
    if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
    while (!why.empty() && why.back() == '\n') why.pop_back();
    if (why.empty()) why = "exit " + std::to_string(ran->exit_code);
    ToolOutcome outcome;
    outcome.is_error = true;
    outcome.text = "trtllm-run history: error: " + EscapeControl(why);
    return outcome;
  }
  return ToolResult(std::move(doc), what);
}

}  // namespace

ToolOutcome Tools::TestHistory(const Value& args) {
  const std::string name = StringArg(args, "name");
  if (name.empty() || name[0] == '-') {
    return ToolError("history", Status::InvalidInput(
                                    "name '" + EscapeControl(name) + "' is not a test or case name",
                                    "a pytest node id, or a case's name"));
  }
  std::vector<std::string> argv = {name, "--last",
                                   std::to_string(static_cast<int>(NumberArg(args, "last", 10)))};
  ToolOutcome outcome = RunHistory(options_, argv, "");
  if (outcome.is_error) return outcome;
  const Value& doc = *outcome.structured;
  auto count = [&](const char* key) {
    const Value* value = Member(doc, key);
    return value && value->IsInt64() ? std::to_string(value->GetInt64()) : std::string("?");
  };
  outcome.text = EscapeControl(name) + ": " + count("passed") + " passed, " + count("failed") +
                 " failed of " + count("runs") + " runs in the history";
  return outcome;
}

ToolOutcome Tools::FlakyTests(const Value& args) {
  std::vector<std::string> argv = {"flaky"};
  if (const Value* days = Member(args, "days")) {
    argv.push_back("--days=" + std::to_string(days->GetDouble()));
  }
  ToolOutcome outcome = RunHistory(options_, argv, "");
  if (outcome.is_error) return outcome;
  const Value* flaky = Member(*outcome.structured, "flaky");
  const std::size_t n = flaky && flaky->IsArray() ? flaky->Size() : 0;
  outcome.text = std::to_string(n) + " flaky test(s) in the history";
  if (n > 0) {
    const Value* first = Member((*flaky)[0], "node_id");
    if (first && first->IsString())
      outcome.text += "; the flakiest: " + std::string(first->GetString());
  }
  return outcome;
}

}  // namespace trtllm_run::mcp
