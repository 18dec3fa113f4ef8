#include "runtime/cases_dir.h"

#include <sys/stat.h>

#include <filesystem>

#include "model/dir_util.h"
#include "model/json_util.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace fs = std::filesystem;

namespace {

std::string InputPath(const std::string& dir) { return dir + "/cases.json"; }
std::string StatePath(const std::string& dir) { return dir + "/cases_state.json"; }

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsRealDirectory(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string StringMember(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

// One case of a cases dir from its own work dir (the run may still be going).
void InspectCase(const std::string& work_dir, CasesDirCase* out) {
  out->status = "pending";
  if (work_dir.empty()) return;
  if (!IsRealDirectory(work_dir)) {
    out->status = "missing";
    return;
  }
  Result<WorkDirInfo> info = InspectWorkDir(work_dir);
  if (!info.ok()) {
    out->status = "unreadable";
    return;
  }
  out->scenario = info->spec.scenario;
  if (info->state) out->job_id = info->state->job_id;
  switch (info->phase) {
    case WorkDirPhase::kFinished:
      out->status = RunStatusName(info->result->status);
      break;
    case WorkDirPhase::kRunning:
      out->status = "running";
      break;
    case WorkDirPhase::kAbandoned:
      out->status = "abandoned";
      break;
    case WorkDirPhase::kNotStarted:
      out->status = "pending";
      break;
  }
}

// The verdicts of a finished run, from its combined result.json.
Status ReadCombinedResult(const std::string& dir, CasesDirInfo* info) {
  Result<std::string> text = ReadWorkDirFile(dir + "/result.json");
  if (!text.ok()) return text.status();
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text.value(), dir + "/result.json", &doc));
  if (StringMember(doc, "kind") != "cases" || !doc.HasMember("cases") || !doc["cases"].IsArray()) {
    return Status::InvalidInput(dir + "/result.json is not the result of a cases run");
  }
  if (doc.HasMember("exit_code") && doc["exit_code"].IsInt()) {
    info->exit_code = doc["exit_code"].GetInt();
  }
  info->cases.clear();
  int index = 0;
  for (const rapidjson::Value& item : doc["cases"].GetArray()) {
    CasesDirCase one;
    one.index = ++index;
    if (item.IsObject() && item.HasMember("index") && item["index"].IsInt()) {
      one.index = item["index"].GetInt();
    }
    one.name = StringMember(item, "name");
    one.work_dir = StringMember(item, "work_dir");
    one.status = StringMember(item, "status");
    one.scenario = StringMember(item, "scenario");
    one.job_id = StringMember(item, "job_id");
    info->cases.push_back(std::move(one));
  }
  return Status::Ok();
}

}  // namespace

bool IsCasesDir(const std::string& dir) {
  return IsRegularFile(InputPath(dir)) || IsRegularFile(StatePath(dir));
}

Status WriteCasesInput(const std::string& run_dir, const std::vector<CaseEntry>& cases) {
  rapidjson::StringBuffer buffer;
  json::Writer writer(buffer);
  writer.SetIndent(' ', 2);
  writer.StartObject();
  json::WriteKey(&writer, "cases");
  writer.StartArray();
  for (const CaseEntry& entry : cases) {
    writer.StartObject();
    if (!entry.name.empty()) {
      json::WriteKey(&writer, "name");
      json::WriteString(&writer, entry.name);
    }
    std::vector<std::pair<std::string, std::string>> fields = GivenRequestFields(entry.request);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      bool list = (i + 1 < fields.size() && fields[i + 1].first == fields[i].first) ||
                  (i > 0 && fields[i - 1].first == fields[i].first);
      if (i > 0 && fields[i - 1].first == fields[i].first) continue;  // written with the first
      json::WriteKey(&writer, fields[i].first);
      if (!list) {
        json::WriteString(&writer, fields[i].second);
        continue;
      }
      writer.StartArray();
      for (std::size_t j = i; j < fields.size() && fields[j].first == fields[i].first; ++j) {
        json::WriteString(&writer, fields[j].second);
      }
      writer.EndArray();
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return WriteFileAtomic(InputPath(run_dir),
                         std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

Status WriteCasesState(const std::string& run_dir, const CasesState& state) {
  rapidjson::StringBuffer buffer;
  json::Writer writer(buffer);
  writer.SetIndent(' ', 2);
  writer.StartObject();
  json::WriteKey(&writer, "supervisor_pid");
  writer.Int(state.supervisor_pid);
  json::WriteKey(&writer, "supervisor_start_time");
  writer.Uint64(state.supervisor_start_time);
  json::WriteKey(&writer, "host");
  json::WriteString(&writer, state.host);
  json::WriteKey(&writer, "started_at");
  json::WriteString(&writer, state.started_at);
  json::WriteKey(&writer, "work_dirs");
  json::WriteStringArray(&writer, state.work_dirs);
  writer.EndObject();
  return WriteFileAtomic(StatePath(run_dir),
                         std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

Result<CasesState> ReadCasesState(const std::string& run_dir) {
  Result<std::string> text = ReadWorkDirFile(StatePath(run_dir));
  if (!text.ok()) return text.status();
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text.value(), StatePath(run_dir), &doc));
  CasesState state;
  if (doc.HasMember("supervisor_pid") && doc["supervisor_pid"].IsInt()) {
    state.supervisor_pid = doc["supervisor_pid"].GetInt();
  }
  if (doc.HasMember("supervisor_start_time") && doc["supervisor_start_time"].IsUint64()) {
    state.supervisor_start_time = doc["supervisor_start_time"].GetUint64();
  }
  state.host = StringMember(doc, "host");
  state.started_at = StringMember(doc, "started_at");
  if (doc.HasMember("work_dirs") && doc["work_dirs"].IsArray()) {
    for (const rapidjson::Value& dir : doc["work_dirs"].GetArray()) {
      state.work_dirs.push_back(dir.IsString() ? dir.GetString() : "");
    }
  }
  return state;
}

const char kCasesRunFile[] = "cases_run_dir";

Status RecordCaseOfRun(const std::string& case_work_dir, const std::string& run_dir) {
  return WriteFileAtomic(case_work_dir + "/" + kCasesRunFile, run_dir + "\n");
}

Status CheckCaseOfRun(const std::string& case_work_dir, const std::string& run_dir) {
  const std::string path = case_work_dir + "/" + kCasesRunFile;
  Result<std::string> text = ReadWorkDirFile(path);
  std::string recorded = text.ok() ? std::string(Trim(text.value())) : "";
  std::error_code error;
  if (!recorded.empty() && std::filesystem::equivalent(recorded, run_dir, error)) {
    return Status::Ok();
  }
  return Status::InvalidInput(
      "work dir " + EscapeControl(case_work_dir) + " is not a case of the cases run " +
          EscapeControl(run_dir) + ": " + path +
          (text.ok() ? " names '" + EscapeControl(recorded) + "'"
                     : " is missing or unreadable (" + text.status().message() + ")") +
          "; nothing was done to it",
      "a cases run acts only on the cases it made; `trtllm-run cancel " + case_work_dir +
          "` acts on that run itself");
}

Result<CasesDirInfo> InspectCasesDir(const std::string& dir) {
  if (!IsCasesDir(dir)) {
    return Status::InvalidInput("'" + EscapeControl(dir) + "' is not the directory of a cases run",
                                "it holds cases.json or cases_state.json, written by "
                                "`trtllm-run run --cases`");
  }
  CasesDirInfo info;
  info.run_dir = dir;
  Result<CasesState> state = ReadCasesState(dir);
  if (state.ok()) {
    info.state = state.value();
  } else {
    info.problems.push_back(state.status().message());
  }
  if (IsRegularFile(dir + "/result.json")) {
    Status read = ReadCombinedResult(dir, &info);
    if (read.ok()) {
      info.phase = "finished";
      return info;
    }
    info.problems.push_back(read.message());
  }
  if (info.state) {
    RunState recorded;
    recorded.supervisor_pid = info.state->supervisor_pid;
    recorded.supervisor_start_time = info.state->supervisor_start_time;
    bool here = info.state->host == HostName();
    info.supervisor_alive =
        here && CheckRecordedSupervisor(recorded, dir).verdict == RecordedProcess::kProven;
    info.phase = info.supervisor_alive || !here ? "running" : "abandoned";
    std::vector<CaseEntry> inputs;
    Result<std::string> input = ReadWorkDirFile(InputPath(dir));
    if (input.ok()) {
      Result<std::vector<CaseEntry>> parsed = ParseCasesText(input.value(), InputPath(dir), {});
      if (parsed.ok()) inputs = std::move(parsed.value());
    }
    for (std::size_t i = 0; i < info.state->work_dirs.size(); ++i) {
      CasesDirCase one;
      one.index = static_cast<int>(i) + 1;
      one.work_dir = info.state->work_dirs[i];
      if (i < inputs.size()) one.name = inputs[i].name;
      InspectCase(one.work_dir, &one);
      info.cases.push_back(std::move(one));
    }
  } else {
    info.phase = "abandoned";
  }
  return info;
}

Result<std::vector<CaseEntry>> LoadFailedCases(const std::string& run_dir,
                                               const CaseRequest& shared) {
  Result<std::string> text = ReadWorkDirFile(InputPath(run_dir));
  if (!text.ok()) {
    return Status::InvalidInput(
        "--rerun-failed " + EscapeControl(run_dir) + ": " + text.status().message(),
        "give the directory of a `trtllm-run run --cases` run (it "
        "holds cases.json)");
  }
  Result<std::vector<CaseEntry>> stored = ParseCasesText(text.value(), InputPath(run_dir), {});
  if (!stored.ok()) return stored.status();
  Result<CasesDirInfo> info = InspectCasesDir(run_dir);
  if (!info.ok()) return info.status();
  if (info->phase == "running") {
    return Status::InvalidInput("the cases run in " + EscapeControl(run_dir) + " is still running",
                                "wait for it (`trtllm-run attach " + run_dir +
                                    "`) or stop it (`trtllm-run cancel " + run_dir + "`)");
  }
  std::vector<CaseEntry> failed;
  for (CaseEntry& entry : stored.value()) {
    std::string status;
    for (const CasesDirCase& one : info->cases) {
      if (one.index == entry.index) status = one.status;
    }
    // A skipped case did what it could (its tests were skipped, as on any rerun).
    const std::string verdict = status.substr(0, status.find(' '));
    if (verdict == RunStatusName(RunStatus::kPassed) ||
        verdict == RunStatusName(RunStatus::kSkipped)) {
      continue;
    }
    MergeRequest(shared, &entry.request);  // flags given now win over the stored inputs
    failed.push_back(std::move(entry));
  }
  if (failed.empty()) {
    return Status::InvalidInput("every case of " + EscapeControl(run_dir) +
                                " PASSED or was SKIPPED; nothing to rerun");
  }
  return failed;
}

}  // namespace trtllm_run
