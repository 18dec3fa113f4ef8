// slurm_env.json: the probe's document (spec 000 Step 2.5, key order as its example)
// plus, once merged, the six policy fields.
#include <rapidjson/document.h>

#include "model/json_util.h"
#include "trtllm_run/environment.h"

namespace trtllm_run {

namespace {

const char* const kPolicyKeys[] = {"cluster_name", "mounts",     "ssh_host",
                                   "slurm_user",   "remote_cwd", "mfa_style"};

void WriteOptionalString(json::Writer* w, const char* key, const std::optional<std::string>& v) {
  w->Key(key);
  if (v) {
    json::WriteString(w, *v);
  } else {
    w->Null();
  }
}

Status GetOptionalString(const json::ObjectReader& r, const rapidjson::Value& object,
                         const char* key, std::optional<std::string>* out) {
  if (!object.HasMember(key)) return Status::Ok();
  const rapidjson::Value& v = object[key];
  if (v.IsNull()) {
    out->reset();
    return Status::Ok();
  }
  if (!v.IsString()) return r.WrongType(key, "a string or null");
  *out = std::string(v.GetString(), v.GetStringLength());
  return Status::Ok();
}

Status ReadPartition(const rapidjson::Value& value, const std::string& origin,
                     SlurmPartition* partition) {
  if (!value.IsObject()) {
    return Status::InvalidInput(origin + " must be an object, got " + json::TypeName(value));
  }
  json::ObjectReader r(value, origin);
  TRTLLM_RUN_RETURN_IF_ERROR(r.Require("name"));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("name", &partition->name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("state", &partition->state));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("time_limit", &partition->time_limit));
  if (value.HasMember("nodes") && value["nodes"].IsInt()) {
    partition->nodes = std::to_string(value["nodes"].GetInt());  // tolerate a number
  } else {
    TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("nodes", &partition->nodes));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(r, value, "arch", &partition->arch));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("gres", &partition->gres));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetOptionalInt("gpus_per_node", &partition->gpus_per_node));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("requires_gres", &partition->requires_gres));
  return Status::Ok();
}

}  // namespace

std::string SlurmEnvToJson(const SlurmEnv& env) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("user");
  json::WriteString(&w, env.user);
  WriteOptionalString(&w, "default_account", env.default_account);
  w.Key("accounts");
  json::WriteStringArray(&w, env.accounts);
  WriteOptionalString(&w, "default_partition", env.default_partition);
  w.Key("partitions");
  w.StartArray();
  for (const SlurmPartition& p : env.partitions) {
    w.StartObject();
    w.Key("name");
    json::WriteString(&w, p.name);
    w.Key("state");
    json::WriteString(&w, p.state);
    w.Key("time_limit");
    json::WriteString(&w, p.time_limit);
    w.Key("nodes");
    json::WriteString(&w, p.nodes);
    WriteOptionalString(&w, "arch", p.arch);
    w.Key("gres");
    json::WriteString(&w, p.gres);
    w.Key("gpus_per_node");
    if (p.gpus_per_node) {
      w.Int(*p.gpus_per_node);
    } else {
      w.Null();
    }
    w.Key("requires_gres");
    w.Bool(p.requires_gres);
    w.EndObject();
  }
  w.EndArray();
  w.Key("pmix");
  w.StartObject();
  w.Key("available");
  json::WriteStringArray(&w, env.pmix_available);
  WriteOptionalString(&w, "preferred", env.pmix_preferred);
  w.EndObject();
  w.Key("errors");
  json::WriteStringArray(&w, env.errors);
  if (env.policy_merged) {
    WriteOptionalString(&w, "cluster_name", env.cluster_name);
    w.Key("mounts");
    if (env.mounts) {
      json::WriteStringArray(&w, *env.mounts);
    } else {
      w.Null();
    }
    WriteOptionalString(&w, "ssh_host", env.ssh_host);
    WriteOptionalString(&w, "slurm_user", env.slurm_user);
    WriteOptionalString(&w, "remote_cwd", env.remote_cwd);
    w.Key("mfa_style");
    if (env.mfa_style) {
      w.Bool(*env.mfa_style);
    } else {
      w.Null();
    }
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

Result<SlurmEnv> SlurmEnvFromJson(const std::string& text, const std::string& origin) {
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text, origin, &doc));
  json::ObjectReader r(doc, origin);
  SlurmEnv env;
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("user", &env.user));
  TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(r, doc, "default_account", &env.default_account));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("accounts", &env.accounts));
  TRTLLM_RUN_RETURN_IF_ERROR(
      GetOptionalString(r, doc, "default_partition", &env.default_partition));
  if (doc.HasMember("partitions")) {
    const rapidjson::Value& list = doc["partitions"];
    if (!list.IsArray()) return r.WrongType("partitions", "an array of objects");
    for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
      SlurmPartition partition;
      TRTLLM_RUN_RETURN_IF_ERROR(
          ReadPartition(list[i], origin + ": partitions[" + std::to_string(i) + "]", &partition));
      env.partitions.push_back(partition);
    }
  }
  if (doc.HasMember("pmix")) {
    const rapidjson::Value& pmix = doc["pmix"];
    if (!pmix.IsObject()) return r.WrongType("pmix", "an object");
    json::ObjectReader pr(pmix, origin + ": pmix");
    TRTLLM_RUN_RETURN_IF_ERROR(pr.GetStringArray("available", &env.pmix_available));
    TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(pr, pmix, "preferred", &env.pmix_preferred));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("errors", &env.errors));
  for (const char* key : kPolicyKeys) {
    if (doc.HasMember(key)) env.policy_merged = true;
  }
  TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(r, doc, "cluster_name", &env.cluster_name));
  if (doc.HasMember("mounts") && !doc["mounts"].IsNull()) {
    std::vector<std::string> mounts;
    TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("mounts", &mounts));
    env.mounts = mounts;
  }
  TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(r, doc, "ssh_host", &env.ssh_host));
  TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(r, doc, "slurm_user", &env.slurm_user));
  TRTLLM_RUN_RETURN_IF_ERROR(GetOptionalString(r, doc, "remote_cwd", &env.remote_cwd));
  if (doc.HasMember("mfa_style") && !doc["mfa_style"].IsNull()) {
    bool mfa = false;
    TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("mfa_style", &mfa));
    env.mfa_style = mfa;
  }
  return env;
}

}  // namespace trtllm_run
