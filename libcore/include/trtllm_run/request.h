// CaseRequest: every input of the case executor (spec 000 "Inputs", spec 002 "Input"),
// from CLI flags, a request file, or code. Every field is optional so that "not given"
// is distinguishable from a default: defaults are applied by the workflow and executor
// that own them, never here.
#ifndef TRTLLM_RUN_REQUEST_H_
#define TRTLLM_RUN_REQUEST_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

using ExecutorOptions = std::map<std::string, std::string>;

struct CaseRequest {
  // Core inputs. At most one of test_cmd / bench_cmd / eval_cmd / custom_* may be given.
  std::optional<std::string> test_cmd;
  std::optional<std::string> bench_cmd;
  std::optional<std::string> eval_cmd;
  std::optional<std::string> custom_cmd;
  std::optional<std::string> custom_script;  // takes precedence over custom_cmd
  std::optional<std::string> custom_env;     // space-separated KEY=VALUE pairs (shell quoting)
  std::optional<std::string> perf_config_yaml;
  std::optional<std::string> model_name;
  std::optional<int> required_devices;
  std::optional<int> total_required_devices;
  std::optional<int> required_devices_per_node;
  // The GPU count of the test-db block a test line came from (the minimum of its
  // system_gpu_count condition): the pytest workflow's count when the test has no marker.
  std::optional<int> test_db_gpu_count;
  std::optional<bool> skip_install;
  std::optional<bool> build_project;
  std::optional<std::string> container_image;
  std::optional<std::string> monitor_timeout;  // 1h, 30m, 3600s, HH:MM:SS, or seconds
  std::optional<std::string> max_pending;      // the same syntax; Slurm: the longest queue wait
  std::optional<std::string> silence_timeout;  // the same syntax; the longest time without output

  // Environment and Slurm inputs.
  std::optional<int> node_count;
  std::optional<std::string> partition;
  std::optional<std::string> account;
  std::optional<std::string> time_limit;
  std::optional<std::string> device_type;
  std::optional<std::string> checkpoint_path;
  std::optional<std::string> models_path;
  std::optional<std::string> llm_models_root;
  std::optional<std::string> container_runtime;  // pyxis (default) or none
  // local_slurm: hold one allocation and run jobs as its steps (spec 001/002 Step 5).
  std::optional<bool> persistent_mode;
  std::optional<std::string> docker_pull;    // local_docker: never, missing (default), always
  std::optional<std::string> docker_memory;  // local_docker: container memory limit, e.g. 8g
  // Slurm: a trtllm-eval that needs more than one node runs on the perf-sanity path
  // (submit.py) although the accuracy run may be skipped there; default false: refused.
  std::optional<bool> eval_perf_fallback;

  // Remote Slurm inputs. The password is never serialized (see slurm_password_file).
  std::optional<std::string> slurm_cluster;
  std::optional<std::string> ssh_host;
  std::optional<std::string> ssh_config_file;  // ssh -F FILE for the login node
  std::optional<int> ssh_port;                 // ssh -p PORT (default: ssh's)
  std::optional<std::string> identity;         // ssh -i FILE, IdentitiesOnly (default: ssh's keys)
  std::vector<std::string> ssh_option;         // more ssh -o Key=Value
  std::optional<std::string> user_name;
  std::optional<std::string> slurm_user;
  std::optional<std::string> remote_cwd;
  std::optional<std::string> remote_repo_path;
  std::optional<std::string> repo_url;
  std::optional<std::string> repo_branch;
  std::vector<std::string> extra_files;
  std::optional<bool> release_allocation;       // remote_slurm: false keeps it for later runs
  std::optional<std::string> alloc_time_limit;  // held allocations' Slurm --time

  // Where and how to run.
  std::optional<std::string> repo_root;  // default: the git top level above the cwd, else cwd
  std::optional<std::string> scenario;   // executor name; default: chosen by routing
  // A saved slurm_env.json (the Slurm probe's document) to plan against instead of
  // probing the cluster; the runtime loads it into Placement.slurm_env.
  std::optional<std::string> slurm_env_file;
  // Inputs of the chosen executor, KEY -> VALUE (request file `executor_options:`
  // mapping, `--executor-option KEY=VALUE`). Core checks only their form; the executor
  // checks what they mean (Executor::CheckExecutorOptions) and reads them in Prepare.
  std::optional<ExecutorOptions> executor_options;

  // Secret: held in memory only; never written to job_spec.json, result.json or logs.
  std::optional<std::string> slurm_password;
};

// The kinds of command a request can carry; the workflow that claims it follows from it.
enum class CommandKind { kNone, kCustom, kBench, kEval, kTest };

// Returns which command the request carries, or kInvalidInput naming both fields when
// commands of two different kinds are given (custom_cmd with custom_script is one kind),
// and when custom_env comes with a command that is not custom (spec 000: custom only; the
// hint shows the command prefixed with the assignments).
TRTLLM_RUN_API Result<CommandKind> ClassifyCommand(const CaseRequest& request);

enum class FieldType { kString, kInt, kBool, kStringList };

// One request field: its snake_case name (request files) and kebab-case flag (CLI).
struct RequestField {
  std::string name;  // e.g. "custom_cmd"
  std::string flag;  // e.g. "custom-cmd"
  FieldType type;
  std::string help;
};

// All settable fields in a stable order. slurm_password is not among them.
TRTLLM_RUN_API const std::vector<RequestField>& RequestFields();

// Sets the field `name` (snake_case or kebab-case) from its text form. `origin` names
// where the value came from ("--tp", "case.yaml:3") for error messages. Ints must be
// positive, bools are true/false/yes/no/1/0, string lists append.
TRTLLM_RUN_API Status SetRequestField(CaseRequest* request, std::string_view name,
                                      std::string_view value, std::string_view origin);

// Sets one executor option from "KEY=VALUE" (`--executor-option`); `origin` names where
// it came from. KEY is [A-Za-z0-9_.-]+; a later value for the same key replaces it.
TRTLLM_RUN_API Status SetExecutorOption(CaseRequest* request, std::string_view key_value,
                                        std::string_view origin);

// Reads a request file (YAML or JSON mapping of field names to values) into `request`,
// overwriting fields the file names. Unknown keys, wrong types and a slurm_password key
// are errors naming the file, line and the valid choices.
TRTLLM_RUN_API Status LoadRequestFile(const std::string& path, CaseRequest* request);

// LoadRequestFile on text already read; `origin` (a path or "<stdin>") is named in errors.
TRTLLM_RUN_API Status LoadRequestText(const std::string& text, const std::string& origin,
                                      CaseRequest* request);

// Limits of ValidateRequestValues.
inline constexpr std::size_t kMaxCommandBytes = 100000;
inline constexpr std::size_t kMaxModelNameBytes = 100;

// Checks what every value may hold before anything is planned: no NUL byte and valid
// UTF-8 anywhere; commands at most kMaxCommandBytes (they travel as one process argument);
// every other value without control characters (it is rendered into job scripts);
// ssh-bound values not starting with '-'; model_name at most kMaxModelNameBytes.
// kInvalidInput naming the field, what is wrong (control bytes escaped) and the fix.
TRTLLM_RUN_API Status ValidateRequestValues(const CaseRequest& request);

// The fields `request` gives, in RequestFields() order, as (snake_case name, text) pairs
// that SetRequestField reads back to the same value; a string list gives one pair per
// item. slurm_password is never among them.
TRTLLM_RUN_API std::vector<std::pair<std::string, std::string>> GivenRequestFields(
    const CaseRequest& request);

// Copies every field given in `overrides` onto `base` (executor options key by key).
TRTLLM_RUN_API void MergeRequest(const CaseRequest& overrides, CaseRequest* base);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_REQUEST_H_
