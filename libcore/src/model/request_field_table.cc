// The CaseRequest field table: one row per field, in declaration order.
#include "model/request_field_table.h"

#include <algorithm>

namespace trtllm_run {
namespace {

FieldDef Str(const char* name, StringMember member, const char* help) {
  FieldDef def{name, FieldType::kString, help};
  def.str = member;
  return def;
}
FieldDef Int(const char* name, IntMember member, const char* help) {
  FieldDef def{name, FieldType::kInt, help};
  def.integer = member;
  return def;
}
// An integer field where 0 is allowed, e.g. required_devices 0 for CPU-only work.
FieldDef IntOrZero(const char* name, IntMember member, const char* help) {
  FieldDef def = Int(name, member, help);
  def.allows_zero = true;
  return def;
}
// A Slurm time limit: the duration syntax of every time flag, stored as Slurm's text.
FieldDef SlurmTime(const char* name, StringMember member, const char* help) {
  FieldDef def = Str(name, member, help);
  def.slurm_time = true;
  return def;
}
FieldDef Bool(const char* name, BoolMember member, const char* help) {
  FieldDef def{name, FieldType::kBool, help};
  def.boolean = member;
  return def;
}
FieldDef List(const char* name, ListMember member, const char* help) {
  FieldDef def{name, FieldType::kStringList, help};
  def.list = member;
  return def;
}

}  // namespace

// In the order of the CaseRequest declaration. slurm_password is deliberately absent.
const std::vector<FieldDef>& FieldTable() {
  using R = CaseRequest;
  static const std::vector<FieldDef> table = {
      Str("test_cmd", &R::test_cmd, "Test command to run (pytest, python, a perf-sanity test id)"),
      Str("bench_cmd", &R::bench_cmd,
          "trtllm-bench command; may chain prepare-dataset && throughput/latency"),
      Str("eval_cmd", &R::eval_cmd, "trtllm-eval command, e.g. trtllm-eval --model M gsm8k"),
      Str("custom_cmd", &R::custom_cmd, "Arbitrary command to run"),
      Str("custom_script", &R::custom_script,
          "Host script run as 'bash <script>'; takes precedence over custom_cmd"),
      Str("custom_env", &R::custom_env, "Space-separated KEY=VALUE pairs for the custom workflow"),
      Str("perf_config_yaml", &R::perf_config_yaml,
          "Perf-sanity config YAML used for node/GPU sizing"),
      Str("model_name", &R::model_name,
          "Short name for job and container names (default: derived from the command)"),
      IntOrZero("required_devices", &R::required_devices,
                "GPU count; 0: CPU only, no GPU asked for (default: from test markers, "
                "--tp/--pp or --tp_size/--pp_size, else 1)"),
      Int("total_required_devices", &R::total_required_devices,
          "Total GPU processes across all nodes (default: derived)"),
      Int("required_devices_per_node", &R::required_devices_per_node,
          "GPU processes per node (default: derived)"),
      Int("test_db_gpu_count", &R::test_db_gpu_count,
          "pytest: the GPU count of the test-db block the test came from (its "
          "system_gpu_count minimum); used when the test has no GPU-count marker"),
      Bool("skip_install", &R::skip_install,
           "Skip 'pip install -e .' when the image has TRT-LLM (default: false; custom "
           "commands: true, --skip-install false installs first)"),
      Bool("build_project", &R::build_project,
           "Build TRT-LLM from source before running, where the executor builds (default: "
           "true; custom commands: false)"),
      Str("container_image", &R::container_image,
          "Container image URI (default: from jenkins/current_image_tags.properties)"),
      Str("monitor_timeout", &R::monitor_timeout,
          "Wall-clock limit: 1h, 30m, 3600s, HH:MM:SS or seconds (default: 1h; pytest: the "
          "test's own timeout + 30m for the install step + 5m)"),
      Str("max_pending", &R::max_pending,
          "Slurm: cancel the job (ERROR) when still pending after this long; same syntax "
          "as monitor_timeout (default: no bound)"),
      Str("silence_timeout", &R::silence_timeout,
          "Stop the job as HANG_DETECTED when it writes no output for this long (job output "
          "of every node and step counts; Slurm: counted once it runs): 90s, 2h, 1h30m, ... "
          "(default: off; TensorRT-LLM's CI uses 2h)"),
      Int("node_count", &R::node_count,
          "Slurm nodes (default: ceil(total_required_devices / required_devices_per_node))"),
      Str("partition", &R::partition, "Slurm partition (required for Slurm)"),
      Str("account", &R::account, "Slurm account (default: the user's default account)"),
      SlurmTime("time_limit", &R::time_limit,
                "Slurm walltime: 2h, 90m, HH:MM:SS, D-HH:MM:SS or Slurm minutes (default: 2h)"),
      Str("device_type", &R::device_type,
          "Required GPU type, e.g. B200, GB200; may route to a remote cluster"),
      Str("checkpoint_path", &R::checkpoint_path, "Host model checkpoint path"),
      Str("models_path", &R::models_path, "Host path of the LLM models directory"),
      Str("llm_models_root", &R::llm_models_root, "Models root inside the container"),
      Str("container_runtime", &R::container_runtime,
          "Slurm container runtime: pyxis (default) or none"),
      Bool("persistent_mode", &R::persistent_mode,
           "local_slurm: hold one Slurm allocation and run jobs as its steps, skipping the "
           "queue on later runs; `trtllm-run release` ends it (default: false)"),
      Str("docker_pull", &R::docker_pull,
          "local_docker image pull policy: never (no registry contacted), missing (default), "
          "always"),
      Str("docker_memory", &R::docker_memory,
          "local_docker container memory limit, e.g. 8g (default: none)"),
      Bool("eval_perf_fallback", &R::eval_perf_fallback,
           "Slurm: run a trtllm-eval that needs more than one node on the perf-sanity path "
           "(the repo's submit.py) although the accuracy run may be skipped there: "
           "TensorRT-LLM's submit.py forwards accuracy settings only for disaggregated "
           "configs (default: false, refused)"),
      Str("slurm_cluster", &R::slurm_cluster,
          "Remote cluster name; looked up in the cluster catalog"),
      Str("ssh_host", &R::ssh_host,
          "Full SSH destination of the login node (overrides the catalog)"),
      Str("ssh_config_file", &R::ssh_config_file,
          "ssh_config file (ssh -F) for the login node: port, key, proxy, host alias"),
      Int("ssh_port", &R::ssh_port, "SSH port of the login node (default: ssh's, or ssh_config)"),
      Str("identity", &R::identity, "SSH private key file for the login node"),
      List("ssh_option", &R::ssh_option, "Extra ssh -o Key=Value for the login node (repeatable)"),
      Str("user_name", &R::user_name, "Login user name (default: the current user)"),
      Str("slurm_user", &R::slurm_user, "SSH/Slurm user name, used verbatim"),
      Str("remote_cwd", &R::remote_cwd, "Remote working directory"),
      Str("remote_repo_path", &R::remote_repo_path, "TensorRT-LLM checkout on the remote cluster"),
      Str("repo_url", &R::repo_url, "Git URL of the repo for the remote setup (default: origin)"),
      Str("repo_branch", &R::repo_branch,
          "Git branch to check out remotely (default: the current branch)"),
      List("extra_files", &R::extra_files, "Extra file to copy to the cluster (repeatable)"),
      Bool("release_allocation", &R::release_allocation,
           "remote_slurm: release the allocation after the run; false keeps it for later runs "
           "(default: true)"),
      SlurmTime("alloc_time_limit", &R::alloc_time_limit,
                "Slurm --time of a held allocation (persistent_mode, release_allocation false; "
                "a duration as --time-limit; default: 1h)"),
      Str("repo_root", &R::repo_root,
          "TensorRT-LLM repo root (default: the git top level above the cwd, else the cwd)"),
      Str("scenario", &R::scenario, "Executor to use (default: chosen by routing)"),
      Str("slurm_env_file", &R::slurm_env_file,
          "A saved slurm_env.json (the Slurm probe's output) to plan against without probing"),
  };
  return table;
}

std::string ToSnake(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::string ToKebab(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

}  // namespace trtllm_run
