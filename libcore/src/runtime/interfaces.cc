// Out-of-line virtual destructors: anchor the vtables and type_info of the plugin
// interfaces in libcore so hosts and plugins share one type identity.
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/workflow.h"
#include "trtllm_run/version.h"

namespace trtllm_run {

Workflow::~Workflow() = default;

void Workflow::Judge(const JobSpec& /*spec*/, const std::string& /*log_tail*/,
                     RunResult* /*result*/) const {}
Executor::~Executor() = default;

Status Executor::Cancel(const JobSpec& spec, const ExecContext& /*context*/) {
  return Status::ExecutionError("cancel is not supported by the " + Name() + " executor",
                                "stop the job by hand; its work dir is " + spec.work_dir);
}

std::unique_ptr<ExecutorSession> Executor::NewSession(const SessionOptions& /*options*/) {
  return nullptr;
}

ExecutorTraits Executor::Traits() const { return {}; }

std::optional<RouteClaim> Executor::Claim(const CaseRequest& /*request*/,
                                          const EnvFacts& /*env*/) const {
  return std::nullopt;
}

Status Executor::CheckExecutorOptions(const std::map<std::string, std::string>& options) const {
  if (options.empty()) return Status::Ok();
  // The key only: a value is never repeated (it may be something meant to stay secret).
  const std::string& key = options.begin()->first;
  return Status::InvalidInput("executor option '" + key + "' (executor_options): the " + Name() +
                                  " executor takes no executor options",
                              "remove executor_options / --executor-option, or pick an executor "
                              "that takes them with --scenario");
}

JobDescription Executor::DescribeJob(const JobSpec& /*spec*/, const RunState* /*state*/) const {
  return {};
}

std::vector<HeldResource> Executor::ListHeld() const { return {}; }

Status Executor::ReleaseHeld(const std::string& id) {
  return Status::NotFound("the " + Name() + " executor holds nothing named '" + id + "'");
}

ExecutorSession::~ExecutorSession() = default;

std::map<std::string, std::string> ExecutorSession::Stats() const { return {}; }

Scenario::~Scenario() = default;

Result<CommandOutput> Scenario::Run(const std::vector<std::string>& argv,
                                    const std::string& stdin_data) {
  Command command;
  command.argv = argv;
  command.stdin_data = stdin_data;
  return Run(command, kNoDeadline);
}

const char* Version() { return TRTLLM_RUN_VERSION_STRING; }

}  // namespace trtllm_run
