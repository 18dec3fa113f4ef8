// job_spec.json: JobSpec <-> JSON. Keys are the struct's field names in its order;
// executor extras follow as top-level string keys.
#include "trtllm_run/job_spec.h"

#include <set>

#include "json_util.h"
#include "trtllm_run/text.h"

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
      "custom_env",
      "monitor_timeout_seconds",
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
  };
  return keys;
}

std::string JobSpecPath(const std::string& work_dir) {
  if (!work_dir.empty() && work_dir.back() == '/') return work_dir + "job_spec.json";
  return work_dir + "/job_spec.json";
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
  w.Key("custom_env");
  w.StartArray();
  for (const EnvVar& var : spec.custom_env) json::WriteString(&w, var.name + "=" + var.value);
  w.EndArray();
  integer("monitor_timeout_seconds", spec.monitor_timeout_seconds);
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
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return Status::IoError(text.status().message(),
                           "is " + work_dir +
                               " a trtllm-run work dir? job_spec.json is written "
                               "when a case is prepared");
  }
  return JobSpecFromJson(text.value(), path);
}

}  // namespace trtllm_run
