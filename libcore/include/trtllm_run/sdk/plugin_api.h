// The plugin ABI: one extern "C" entry point per plugin .so that returns a descriptor.
//
// The loader reads descriptor->api_version before anything else and refuses plugins
// whose version differs from TRTLLM_RUN_PLUGIN_API_VERSION; bump it whenever the
// descriptor or any interface a plugin implements (Workflow, Executor, the types they
// exchange) changes. A plugin registers exactly one workflow or executor.
//
//   TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(MyExecutor, "my_cluster", "1.0", "Runs on X");
#ifndef TRTLLM_RUN_SDK_PLUGIN_API_H_
#define TRTLLM_RUN_SDK_PLUGIN_API_H_

#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/workflow.h"

// 2: Executor::Cancel, Placement in Validate/Prepare. 3: Executor::NewSession.
// 4: Workflow::Judge, RunStatus::kSkipped, RunResult tests, PlanStep/JobSpec working_dir.
// 5: ExecContext::slurm_password; Status and Result [[nodiscard]].
// 6: Executor traits, Claim, CheckExecutorOptions, DescribeJob, ListHeld/ReleaseHeld;
//    CaseRequest/JobSpec executor_options.
// 7: JobPlan::launch (LaunchFacts: layout, names, patterns, perf inputs, after_placement),
//    JobSpec::shell_options; CaseRequest/JobPlan/JobSpec max_pending; CaseRequest SSH
//    fields (ssh_port, identity, ssh_option).
// 8: CaseRequest/JobPlan/JobSpec silence_timeout.
// 9: LaunchFacts/JobSpec command_prelude, CaseRequest test_db_gpu_count.
// 10: ExecContext::job_ending.
// 11: JobDescription scheduler_state, scheduler_reason, problem; LaunchFacts::uses_models_root;
//     the after_placement hook runs once per case.
// 12: RunResult::perf (PerfSection: metrics, match key, gate, history); RunOptions::finalize.
// 13: the toolkit of the built-in plugins joins the SDK and the fingerprint (every header
//     under sdk/): process, supervise/, commands/, input_limits, render, slurm/.
// 14: Scenario::Run(Command, Deadline) and Scenario::Start(Command) (Command, Deadline,
//     CommandOutput::timed_out); SlurmClientOptions::stream_output replaces start_stream.
// 15: RunSlurmJob(spec, context, Scenario&), ExecuteSlurmJob and MakeHeldRunner replace
//     the local/remote pairs.
// 16: NewSlurmSession and CheckSlurmSessionOptions (sdk/slurm/session.h) replace
//     NewLocalSlurmSession, NewRemoteSlurmSession and sdk/slurm/remote_session.h.
#define TRTLLM_RUN_PLUGIN_API_VERSION 16
#define TRTLLM_RUN_PLUGIN_ENTRY_POINT "trtllm_run_plugin_descriptor"

namespace trtllm_run {
enum class PluginKind : int { kWorkflow = 1, kExecutor = 2 };
}  // namespace trtllm_run

extern "C" {
struct TrtllmRunPluginDescriptor {
  int api_version;  // first member in every version: read before anything else
  const char* name;
  int kind;  // trtllm_run::PluginKind
  const char* version;
  const char* description;
  // Exactly one is non-null, matching `kind`. Objects are deleted through their virtual
  // destructor while the plugin's library is still loaded.
  trtllm_run::Workflow* (*create_workflow)();
  trtllm_run::Executor* (*create_executor)();
};
}

#define TRTLLM_RUN_DECLARE_PLUGIN_IMPL_(kind_, name_, version_, description_, wf_, ex_) \
  extern "C" __attribute__((visibility("default"))) const TrtllmRunPluginDescriptor*    \
  trtllm_run_plugin_descriptor() {                                                      \
    static const TrtllmRunPluginDescriptor descriptor = {TRTLLM_RUN_PLUGIN_API_VERSION, \
                                                         name_,                         \
                                                         static_cast<int>(kind_),       \
                                                         version_,                      \
                                                         description_,                  \
                                                         wf_,                           \
                                                         ex_};                          \
    return &descriptor;                                                                 \
  }

#define TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(Class, name, version, description)                      \
  TRTLLM_RUN_DECLARE_PLUGIN_IMPL_(::trtllm_run::PluginKind::kExecutor, name, version, description, \
                                  nullptr,                                                         \
                                  []() -> ::trtllm_run::Executor* { return new Class(); })

#define TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(Class, name, version, description) \
  TRTLLM_RUN_DECLARE_PLUGIN_IMPL_(                                            \
      ::trtllm_run::PluginKind::kWorkflow, name, version, description,        \
      []() -> ::trtllm_run::Workflow* { return new Class(); }, nullptr)

#endif  // TRTLLM_RUN_SDK_PLUGIN_API_H_
