// job_spec.json: JobSpec <-> JSON. Keys are the struct's field names in its order;
// executor extras follow as top-level string keys.
#include "trtllm_run/sdk/job_spec.h"

#include <rapidjson/writer.h>

#include <set>

#include "model/dir_util.h"
#include "model/json_util.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// Every key JobSpecToJson writes for a struct field; extras may not use these.
const std::set<std::string>& FieldKeys() {
  static const std::set<std::string> keys = {
      "scenario",
      "workflow_type",
      "model_name",
      "work_dir",
      "log_file",
      "repo_root",
      "direct_cmd",
      "working_dir",
      "shell_options",
      "command_prelude",
      "custom_env",
      "monitor_timeout_seconds",
      "max_pending_seconds",
      "silence_timeout_seconds",
      "success_patterns",
      "failure_patterns",
      "required_devices",
      "total_required_devices",
      "required_devices_per_node",
      "node_count",
      "job_name",
      "container_image",
      "build_project",
      "skip_install",
      "script_path",
      "script_name",
      "log_file_pattern",
      "extra_files",
      "slurm_params",
      "slurm_env",
      "docker_cmd",
      "container_name",
      "container_mounts",
      "container_runtime",
      "persistent_mode",
      "device_type",
      "llm_models_root",
      "partition",
      "account",
      "time_limit",
      "slurm_cluster",
      "ssh_host",
      "slurm_user",
      "remote_cwd",
      "remote_repo_path",
      "remote_work_dir",
      "executor_options",
      "repo_url",
      "repo_branch",
  };
  return keys;
}

std::string JobSpecPath(const std::string& work_dir) {
  if (!work_dir.empty() && work_dir.back() == '/') return work_dir + "job_spec.json";
  return work_dir + "/job_spec.json";
}

// "slurm_params": the object, or null when the spec has none.
void WriteSlurmParams(json::Writer* writer, const std::optional<SlurmParams>& params) {
  json::Writer& w = *writer;
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    json::WriteString(&w, value);
  };
  auto integer = [&](const char* key, int value) {
    w.Key(key);
    w.Int(value);
  };
  w.Key("slurm_params");
  if (params) {
    const SlurmParams& p = *params;
    w.StartObject();
    str("partition", p.partition);
    str("account", p.account);
    str("time_limit", p.time_limit);
    integer("nodes", p.nodes);
    integer("ntasks", p.ntasks);
    integer("ntasks_per_node", p.ntasks_per_node);
    w.Key("gpus_per_node");
    if (p.gpus_per_node) {
      w.Int(*p.gpus_per_node);
    } else {
      w.Null();
    }
    str("gres", p.gres);
    str("mpi_plugin", p.mpi_plugin);
    w.EndObject();
  } else {
    w.Null();
  }
}

// "slurm_env": the saved probe document embedded as JSON, or null.
void WriteSlurmEnv(json::Writer* writer, const std::string& slurm_env_json) {
  json::Writer& w = *writer;
  w.Key("slurm_env");
  if (slurm_env_json.empty()) {
    w.Null();
  } else {
    rapidjson::Document env;
    if (!json::ParseDocument(slurm_env_json, "slurm_env_json", &env).ok()) {
      w.Null();  // WriteJobSpec refuses this case before it gets here
    } else {
      env.Accept(w);
    }
  }
}

}  // namespace

std::string JobSpecToJson(const JobSpec& spec) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    json::WriteString(&w, value);
  };
  auto integer = [&](const char* key, int value) {
    w.Key(key);
    w.Int(value);
  };
  auto boolean = [&](const char* key, bool value) {
    w.Key(key);
    w.Bool(value);
  };
  str("scenario", spec.scenario);
  str("workflow_type", spec.workflow_type);
  str("model_name", spec.model_name);
  str("work_dir", spec.work_dir);
  str("log_file", spec.log_file);
  str("repo_root", spec.repo_root);
  str("direct_cmd", spec.direct_cmd);
  str("working_dir", spec.working_dir);
  if (!spec.shell_options.empty()) {  // absent: plain bash -c
    w.Key("shell_options");
    json::WriteStringArray(&w, spec.shell_options);
  }
  if (!spec.command_prelude.empty()) str("command_prelude", spec.command_prelude);
  w.Key("custom_env");
  w.StartArray();
  for (const EnvVar& var : spec.custom_env) json::WriteString(&w, var.name + "=" + var.value);
  w.EndArray();
  integer("monitor_timeout_seconds", spec.monitor_timeout_seconds);
  // Only when set: a spec without a queue bound reads as before.
  if (spec.max_pending_seconds > 0) integer("max_pending_seconds", spec.max_pending_seconds);
  if (spec.silence_timeout_seconds > 0) {
    integer("silence_timeout_seconds", spec.silence_timeout_seconds);
  }
  w.Key("success_patterns");
  json::WriteStringArray(&w, spec.success_patterns);
  w.Key("failure_patterns");
  json::WriteStringArray(&w, spec.failure_patterns);
  integer("required_devices", spec.required_devices);
  integer("total_required_devices", spec.total_required_devices);
  integer("required_devices_per_node", spec.required_devices_per_node);
  integer("node_count", spec.node_count);
  str("job_name", spec.job_name);
  str("container_image", spec.container_image);
  boolean("build_project", spec.build_project);
  boolean("skip_install", spec.skip_install);
  str("script_path", spec.script_path);
  str("script_name", spec.script_name);
  str("log_file_pattern", spec.log_file_pattern);
  w.Key("extra_files");
  json::WriteStringArray(&w, spec.extra_files);
  WriteSlurmParams(&w, spec.slurm_params);
  WriteSlurmEnv(&w, spec.slurm_env_json);
  str("docker_cmd", spec.docker_cmd);
  str("container_name", spec.container_name);
  str("container_mounts", spec.container_mounts);
  str("container_runtime", spec.container_runtime);
  boolean("persistent_mode", spec.persistent_mode);
  str("device_type", spec.device_type);
  str("llm_models_root", spec.llm_models_root);
  str("partition", spec.partition);
  str("account", spec.account);
  str("time_limit", spec.time_limit);
  str("slurm_cluster", spec.slurm_cluster);
  str("ssh_host", spec.ssh_host);
  str("slurm_user", spec.slurm_user);
  str("remote_cwd", spec.remote_cwd);
  str("remote_repo_path", spec.remote_repo_path);
  str("remote_work_dir", spec.remote_work_dir);
  str("repo_url", spec.repo_url);
  str("repo_branch", spec.repo_branch);
  if (!spec.executor_options.empty()) {
    w.Key("executor_options");
    w.StartObject();
    for (const auto& [key, value] : spec.executor_options) {
      json::WriteKey(&w, key);
      json::WriteString(&w, value);
    }
    w.EndObject();
  }
  for (const auto& [key, value] : spec.extra) {
    if (FieldKeys().count(key) != 0) continue;  // a field always wins; WriteJobSpec refuses this
    json::WriteKey(&w, key);
    json::WriteString(&w, value);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

Result<JobSpec> JobSpecFromJson(const std::string& text, const std::string& origin) {
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text, origin, &doc));
  json::ObjectReader r(doc, origin);
  JobSpec spec;
  TRTLLM_RUN_RETURN_IF_ERROR(r.Require("scenario"));
  TRTLLM_RUN_RETURN_IF_ERROR(r.Require("work_dir"));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("scenario", &spec.scenario));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("workflow_type", &spec.workflow_type));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("model_name", &spec.model_name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("work_dir", &spec.work_dir));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("log_file", &spec.log_file));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("repo_root", &spec.repo_root));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("direct_cmd", &spec.direct_cmd));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("working_dir", &spec.working_dir));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("shell_options", &spec.shell_options));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("command_prelude", &spec.command_prelude));
  std::vector<std::string> env;
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("custom_env", &env));
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    if (eq == 0 || eq == std::string::npos) {
      return Status::InvalidInput(
          origin + ": key 'custom_env' must hold \"KEY=VALUE\" strings, got '" + entry + "'");
    }
    spec.custom_env.push_back(EnvVar{entry.substr(0, eq), entry.substr(eq + 1)});
  }
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("monitor_timeout_seconds", &spec.monitor_timeout_seconds));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("max_pending_seconds", &spec.max_pending_seconds));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("silence_timeout_seconds", &spec.silence_timeout_seconds));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("success_patterns", &spec.success_patterns));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("failure_patterns", &spec.failure_patterns));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("required_devices", &spec.required_devices));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("total_required_devices", &spec.total_required_devices));
  TRTLLM_RUN_RETURN_IF_ERROR(
      r.GetInt("required_devices_per_node", &spec.required_devices_per_node));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("node_count", &spec.node_count));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("job_name", &spec.job_name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("container_image", &spec.container_image));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("build_project", &spec.build_project));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("skip_install", &spec.skip_install));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("script_path", &spec.script_path));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("script_name", &spec.script_name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("log_file_pattern", &spec.log_file_pattern));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("extra_files", &spec.extra_files));
  if (doc.HasMember("slurm_params") && !doc["slurm_params"].IsNull()) {
    if (!doc["slurm_params"].IsObject()) return r.WrongType("slurm_params", "an object or null");
    json::ObjectReader p(doc["slurm_params"], origin + " (slurm_params)");
    SlurmParams params;
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetString("partition", &params.partition));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetString("account", &params.account));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetString("time_limit", &params.time_limit));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetInt("nodes", &params.nodes));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetInt("ntasks", &params.ntasks));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetInt("ntasks_per_node", &params.ntasks_per_node));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetOptionalInt("gpus_per_node", &params.gpus_per_node));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetString("gres", &params.gres));
    TRTLLM_RUN_RETURN_IF_ERROR(p.GetString("mpi_plugin", &params.mpi_plugin));
    spec.slurm_params = params;
  }
  if (doc.HasMember("slurm_env") && !doc["slurm_env"].IsNull()) {
    if (!doc["slurm_env"].IsObject()) return r.WrongType("slurm_env", "an object or null");
    rapidjson::StringBuffer env_text;
    rapidjson::Writer<rapidjson::StringBuffer> env_writer(env_text);
    doc["slurm_env"].Accept(env_writer);
    spec.slurm_env_json.assign(env_text.GetString(), env_text.GetSize());
  }
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("docker_cmd", &spec.docker_cmd));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("container_name", &spec.container_name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("container_mounts", &spec.container_mounts));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("container_runtime", &spec.container_runtime));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("persistent_mode", &spec.persistent_mode));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("device_type", &spec.device_type));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("llm_models_root", &spec.llm_models_root));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("partition", &spec.partition));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("account", &spec.account));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("time_limit", &spec.time_limit));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("slurm_cluster", &spec.slurm_cluster));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("ssh_host", &spec.ssh_host));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("slurm_user", &spec.slurm_user));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("remote_cwd", &spec.remote_cwd));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("remote_repo_path", &spec.remote_repo_path));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("remote_work_dir", &spec.remote_work_dir));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("repo_url", &spec.repo_url));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("repo_branch", &spec.repo_branch));
  if (doc.HasMember("executor_options") && !doc["executor_options"].IsNull()) {
    const rapidjson::Value& options = doc["executor_options"];
    if (!options.IsObject()) return r.WrongType("executor_options", "an object of strings");
    for (auto it = options.MemberBegin(); it != options.MemberEnd(); ++it) {
      if (!it->value.IsString()) return r.WrongType("executor_options", "an object of strings");
      spec.executor_options[std::string(it->name.GetString(), it->name.GetStringLength())] =
          std::string(it->value.GetString(), it->value.GetStringLength());
    }
  }
  if (spec.scenario.empty()) {
    return Status::InvalidInput(origin + ": key 'scenario' is empty; it names the executor");
  }
  if (spec.work_dir.empty()) return Status::InvalidInput(origin + ": key 'work_dir' is empty");

  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    if (FieldKeys().count(key) != 0) continue;
    if (!it->value.IsString()) {
      return Status::InvalidInput(
          origin + ": key '" + key + "' must be a string, got " + json::TypeName(it->value),
          "keys other than the job spec's fields are executor extras, "
          "which hold strings");
    }
    spec.extra[key] = std::string(it->value.GetString(), it->value.GetStringLength());
  }
  return spec;
}

Status WriteJobSpec(const JobSpec& spec) {
  if (spec.work_dir.empty())
    return Status::InvalidInput("cannot write job_spec.json: work_dir is empty");
  if (!spec.slurm_env_json.empty()) {
    rapidjson::Document env;
    if (!json::ParseObject(spec.slurm_env_json, "slurm_env_json", &env).ok()) {
      return Status::Internal("cannot write job_spec.json: slurm_env_json is not a JSON object");
    }
  }
  for (const auto& entry : spec.extra) {
    if (FieldKeys().count(entry.first) != 0) {
      return Status::InvalidInput("cannot write job_spec.json: extra key '" + entry.first +
                                      "' collides with the job spec field of that name",
                                  "executors must give their extra keys distinct names");
    }
  }
  return WriteFileAtomic(JobSpecPath(spec.work_dir), JobSpecToJson(spec));
}

Result<JobSpec> ReadJobSpec(const std::string& work_dir) {
  std::string path = JobSpecPath(work_dir);
  Result<std::string> text = ReadWorkDirFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();
    return Status::IoError(text.status().message(),
                           "is " + work_dir +
                               " a trtllm-run work dir? job_spec.json is written "
                               "when a case is prepared");
  }
  return JobSpecFromJson(text.value(), path);
}

}  // namespace trtllm_run
