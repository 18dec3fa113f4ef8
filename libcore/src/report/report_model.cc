// A run dir's result.json read into the report's model (report_model.h).
#include "report/report_model.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>

#include "model/json_util.h"
#include "placement/routing.h"
#include "report/html_text.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::report {
namespace {

using rapidjson::Value;

// The detailed failures: the rest are rows of the table only, so that a stage where
// everything failed still makes a page of bounded size.
constexpr std::size_t kMaxDetailedFailures = 100;
constexpr std::size_t kMaxLogLines = 40;
constexpr std::size_t kMaxLineBytes = 400;
constexpr std::size_t kMaxMessageBytes = 2000;

const Value* Member(const Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string Str(const Value& object, const char* key) {
  const Value* value = Member(object, key);
  return value && value->IsString() ? std::string(value->GetString(), value->GetStringLength())
                                    : std::string();
}

std::optional<double> Num(const Value& object, const char* key) {
  const Value* value = Member(object, key);
  if (value && value->IsNumber()) return value->GetDouble();
  return std::nullopt;
}

int Int(const Value& object, const char* key) {
  const Value* value = Member(object, key);
  return value && value->IsInt() ? value->GetInt() : 0;
}

const Value& Arr(const Value& object, const char* key) {
  static const Value kEmpty(rapidjson::kArrayType);
  const Value* value = Member(object, key);
  return value && value->IsArray() ? *value : kEmpty;
}

std::vector<std::string> Lines(const Value& array) {
  std::vector<std::string> lines;
  const std::size_t first = array.Size() > kMaxLogLines ? array.Size() - kMaxLogLines : 0;
  for (rapidjson::SizeType i = static_cast<rapidjson::SizeType>(first); i < array.Size(); ++i) {
    if (array[i].IsString()) lines.push_back(CutText(array[i].GetString(), kMaxLineBytes));
  }
  return lines;
}

bool IsGoodVerdict(const std::string& status) { return status == "PASSED" || status == "SKIPPED"; }

Status ReadJson(const std::string& path, rapidjson::Document* doc) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return json::ParseObject(text.value(), path, doc);
}

void CountOutcomes(ReportModel* model) {
  std::map<std::string, long long> counts;
  for (const TestRow& row : model->tests) ++counts[row.outcome];
  for (const auto& [outcome, count] : counts) model->counts.emplace_back(outcome, count);
}

// The perf section of one case's result.json (BRIEF: result.json "perf").
void ReadPerf(const Value& result, const std::string& case_name, ReportModel* model) {
  const Value* perf = Member(result, "perf");
  if (!perf || !perf->IsObject()) return;
  const std::optional<double> new_time = ParseIsoUtc(Str(result, "finished_at"));
  const Value* gate = Member(*perf, "gate");
  const std::string mode = gate ? Str(*gate, "mode") : "";
  std::vector<PerfSeries> series;
  auto find = [&](const std::string& metric) -> PerfSeries& {
    for (PerfSeries& s : series) {
      if (s.metric == metric) return s;
    }
    PerfSeries fresh;
    fresh.case_name = case_name;
    fresh.metric = metric;
    fresh.gate_mode = mode;
    fresh.value_time = new_time;
    series.push_back(fresh);
    return series.back();
  };
  for (const Value& metric : Arr(*perf, "metrics").GetArray()) {
    const std::string name = Str(metric, "name");
    if (name.empty()) continue;
    PerfSeries& s = find(name);
    s.value = Num(metric, "value");
    s.unit = Str(metric, "unit");
    s.direction = Str(metric, "direction");
    const Value* gated = Member(metric, "gated");
    s.gated = gated && gated->IsBool() && gated->GetBool();
  }
  if (gate) {
    for (const Value& row : Arr(*gate, "rows").GetArray()) {
      const std::string name = Str(row, "metric");
      if (name.empty()) continue;
      PerfSeries& s = find(name);
      if (!s.value) s.value = Num(row, "new");
      s.baseline = Num(row, "baseline");
      s.threshold = Num(row, "threshold");
      s.change = Num(row, "change");
      const Value* regressed = Member(row, "regressed");
      s.regressed = regressed && regressed->IsBool() && regressed->GetBool();
    }
  }
  const Value* history = Member(*perf, "history");
  if (history && history->IsObject()) {
    for (auto it = history->MemberBegin(); it != history->MemberEnd(); ++it) {
      if (!it->value.IsArray()) continue;
      PerfSeries& s = find(std::string(it->name.GetString(), it->name.GetStringLength()));
      for (const Value& point : it->value.GetArray()) {
        if (!point.IsArray() || point.Size() != 2 || !point[0].IsString() || !point[1].IsNumber()) {
          continue;
        }
        std::optional<double> at = ParseIsoUtc(point[0].GetString());
        if (at) s.history.emplace_back(*at, point[1].GetDouble());
      }
      std::sort(s.history.begin(), s.history.end());
    }
  }
  for (PerfSeries& s : series) model->perf.push_back(std::move(s));
}

// The failure of one case: its verdict's evidence and its failed tests' messages.
Failure CaseFailure(const Value& result, const std::string& name) {
  Failure failure;
  failure.name = name;
  failure.outcome = Str(result, "status");
  failure.reason = CutText(Str(result, "reason"), kMaxMessageBytes);
  failure.diagnosis = CutText(Str(result, "diagnosis"), kMaxMessageBytes);
  failure.log_file = Str(result, "log_file");
  failure.log_tail = Lines(Arr(result, "log_tail"));
  for (const Value& test : Arr(result, "test_cases").GetArray()) {
    const std::string outcome = Str(test, "outcome");
    if (outcome != "failed" && outcome != "error") continue;
    if (failure.messages.size() >= 20) break;
    failure.messages.push_back(CutText(Str(test, "name") + " - " + Str(test, "message"), 600));
  }
  return failure;
}

TimelineJob JobOf(const Value& result, const std::string& label) {
  TimelineJob job;
  job.label = label;
  const Value* details = Member(result, "details");
  if (details) job.job_id = Str(*details, "job_id");
  job.scenario = Str(result, "scenario");
  job.status = Str(result, "status");
  job.start = ParseIsoUtc(Str(result, "started_at"));
  job.end = ParseIsoUtc(Str(result, "finished_at"));
  job.source = "trtllm-run";
  return job;
}

void AddTestCases(const Value& result, const std::string& group, ReportModel* model) {
  for (const Value& test : Arr(result, "test_cases").GetArray()) {
    TestRow row;
    row.name = Str(test, "name");
    row.outcome = AsciiLower(Str(test, "outcome"));
    row.group = group;
    row.message = CutText(Str(test, "message"), 240);
    model->tests.push_back(std::move(row));
  }
}

void AddFailure(Failure failure, ReportModel* model) {
  if (model->failures.size() >= kMaxDetailedFailures) {
    ++model->failures_left_out;
    return;
  }
  model->failures.push_back(std::move(failure));
}

void ReadSingleRun(const Value& doc, ReportModel* model) {
  model->kind = "run";
  const std::string name =
      !Str(doc, "model_name").empty() ? Str(doc, "model_name") : Str(doc, "command");
  model->title = "run " + name;
  model->run_dir = Str(doc, "work_dir");
  model->where = {{"scenario", Str(doc, "scenario")}, {"workflow", Str(doc, "workflow_type")}};
  if (const Value* details = Member(doc, "details")) {
    for (const char* key : {"job_id", "nodes", "job_state", "container_image", "ssh_host"}) {
      if (!Str(*details, key).empty()) model->where.emplace_back(key, Str(*details, key));
    }
  }
  model->where.emplace_back("command", Str(doc, "command"));
  AddTestCases(doc, "", model);
  if (model->tests.empty()) {
    TestRow row;
    row.name = name;
    row.outcome = AsciiLower(Str(doc, "status"));
    row.seconds = Num(doc, "duration_seconds");
    row.message = CutText(Str(doc, "reason"), 240);
    model->tests.push_back(row);
  }
  if (!IsGoodVerdict(model->status)) AddFailure(CaseFailure(doc, name), model);
  model->jobs.push_back(JobOf(doc, name));
  ReadPerf(doc, name, model);
  CountOutcomes(model);
}

void ReadCases(const Value& doc, ReportModel* model) {
  model->kind = "cases";
  model->title = "cases " + Str(doc, "cases_file");
  std::set<std::string> scenarios;
  for (const Value& item : Arr(doc, "cases").GetArray()) {
    const std::string name = Str(item, "name");
    const Value* result = Member(item, "result");
    const bool has_result = result && result->IsObject();
    scenarios.insert(Str(item, "scenario"));
    TestRow row;
    row.name = name;
    row.outcome = AsciiLower(Str(item, "status"));
    row.group = "case " + std::to_string(Int(item, "index"));
    row.seconds = Num(item, "duration_seconds");
    if (has_result) row.message = CutText(Str(*result, "reason"), 240);
    model->tests.push_back(row);
    if (!has_result) continue;
    AddTestCases(*result, name, model);
    if (!IsGoodVerdict(Str(item, "status"))) AddFailure(CaseFailure(*result, name), model);
    TimelineJob job = JobOf(*result, name);
    if (job.job_id.empty()) job.job_id = Str(item, "job_id");
    model->jobs.push_back(job);
    ReadPerf(*result, name, model);
  }
  std::string joined;
  for (const std::string& s : scenarios) joined += (joined.empty() ? "" : ", ") + s;
  model->where = {{"scenario", joined}, {"cases file", Str(doc, "cases_file")}};
  if (const Value* counts = Member(doc, "counts"); counts && counts->IsObject()) {
    for (auto it = counts->MemberBegin(); it != counts->MemberEnd(); ++it) {
      if (it->value.IsInt64() && it->value.GetInt64() > 0) {
        model->counts.emplace_back(it->name.GetString(), it->value.GetInt64());
      }
    }
  }
}

void ReadStage(const Value& doc, ReportModel* model) {
  model->kind = "stage";
  model->title = "stage " + Str(doc, "stage");
  model->where = {{"stage", Str(doc, "stage")}, {"test-db", Str(doc, "test_db_context")}};
  std::set<std::string> scenarios;
  for (const Value& session : Arr(doc, "sessions").GetArray()) {
    scenarios.insert(Str(session, "scenario"));
  }
  std::string joined;
  for (const std::string& s : scenarios) joined += (joined.empty() ? "" : ", ") + s;
  model->where.emplace_back("scenario", joined);
  model->where.emplace_back("merged JUnit", Str(doc, "junit"));
  // The shard jobs: their own result.json holds the log tail and the diagnosis.
  std::map<std::string, rapidjson::Document> shard_results;
  std::map<std::pair<int, std::string>, std::string> work_dir_of;  // (round, test) -> dir
  for (const Value& run : Arr(doc, "shard_runs").GetArray()) {
    const int split = Int(run, "split_id"), round = Int(run, "round");
    const std::string dir = Str(run, "work_dir");
    std::string label = "split " + std::to_string(split) + " round " + std::to_string(round);
    TimelineJob job;
    job.label = label;
    job.status = Str(run, "status");
    job.job_id = Str(run, "job_id");
    job.source = "trtllm-run";
    if (!dir.empty()) {
      rapidjson::Document& shard = shard_results[dir];
      if (ReadJson(dir + "/result.json", &shard).ok()) {
        TimelineJob from_result = JobOf(shard, label);
        job.start = from_result.start;
        job.end = from_result.end;
        job.scenario = from_result.scenario;
        if (job.job_id.empty()) job.job_id = from_result.job_id;
      }
    }
    model->jobs.push_back(job);
    for (const Value& test : Arr(run, "tests").GetArray()) {
      if (test.IsString()) work_dir_of[{round, test.GetString()}] = dir;
    }
  }
  for (const Value& test : Arr(doc, "tests").GetArray()) {
    TestRow row;
    row.name = Str(test, "id");
    row.outcome = Str(test, "outcome");
    row.group = "split " + std::to_string(Int(test, "split_id"));
    row.seconds = Num(test, "seconds");
    row.reruns = Int(test, "reruns");
    const Value& attempts = Arr(test, "attempts");
    std::string last_message;
    for (const Value& attempt : attempts.GetArray()) {
      if (!Str(attempt, "message").empty()) last_message = Str(attempt, "message");
    }
    row.message = !Str(test, "waived_reason").empty()    ? Str(test, "waived_reason")
                  : !Str(test, "not_run_reason").empty() ? Str(test, "not_run_reason")
                                                         : last_message;
    row.message = CutText(row.message, 240);
    if (row.reruns > 0 || attempts.Size() > 1) {
      Rerun rerun;
      rerun.name = row.name;
      rerun.final_outcome = row.outcome;
      rerun.note = Str(test, "rerun_note");
      for (const Value& attempt : attempts.GetArray()) {
        rerun.attempts.push_back(Str(attempt, "outcome"));
      }
      model->reruns.push_back(rerun);
    }
    if (row.outcome == "flaky") model->flaky_in_run.push_back(row.name);
    if (row.outcome == "failed" || row.outcome == "not_run") {
      Failure failure;
      failure.name = row.name;
      failure.outcome = row.outcome;
      failure.reason = CutText(Str(test, "not_run_reason"), kMaxMessageBytes);
      for (const Value& attempt : attempts.GetArray()) {
        const std::string message = Str(attempt, "message");
        if (!message.empty()) failure.messages.push_back(CutText(message, kMaxMessageBytes));
      }
      // The log of the last round that ran it.
      for (int round = static_cast<int>(attempts.Size()) + 1; round >= 0; --round) {
        auto dir = work_dir_of.find({round, row.name});
        if (dir == work_dir_of.end()) continue;
        auto shard = shard_results.find(dir->second);
        if (shard != shard_results.end() && shard->second.IsObject()) {
          failure.diagnosis = CutText(Str(shard->second, "diagnosis"), kMaxMessageBytes);
          failure.log_file = Str(shard->second, "log_file");
          failure.log_tail = Lines(Arr(shard->second, "log_tail"));
        }
        break;
      }
      AddFailure(std::move(failure), model);
    }
    model->tests.push_back(std::move(row));
  }
  if (const Value* counts = Member(doc, "counts"); counts && counts->IsObject()) {
    for (auto it = counts->MemberBegin(); it != counts->MemberEnd(); ++it) {
      if (it->value.IsInt64())
        model->counts.emplace_back(it->name.GetString(), it->value.GetInt64());
    }
  }
  for (const Value& warning : Arr(doc, "warnings").GetArray()) {
    if (warning.IsString()) model->warnings.push_back(CutText(warning.GetString(), 600));
  }
}

}  // namespace

Result<ReportModel> BuildReportModel(const std::string& run_dir) {
  const std::string path = run_dir + "/result.json";
  rapidjson::Document doc;
  Status read = ReadJson(path, &doc);
  if (!read.ok()) {
    return Status::InvalidInput(
        "cannot read the run's result.json: " + read.message(),
        "give the directory of a finished run: a work dir, a `run --cases` dir or a stage dir");
  }
  // A stage's result.json carries no schema_version; every other one carries 1.
  if (Member(doc, "schema_version") != nullptr && Int(doc, "schema_version") != 1) {
    return Status::InvalidInput(path + ": schema_version is not 1",
                                "this trtllm-run reads result.json of schema_version 1");
  }
  ReportModel model;
  model.run_dir = run_dir;
  model.status = Str(doc, "status");
  model.reason = Str(doc, "reason");
  model.started_at = Str(doc, "started_at");
  model.finished_at = Str(doc, "finished_at");
  model.duration_seconds = Num(doc, "duration_seconds").value_or(0);
  const std::string kind = Str(doc, "kind");
  if (kind == "cases") {
    ReadCases(doc, &model);
  } else if (kind == "stage") {
    ReadStage(doc, &model);
  } else if (kind.empty()) {
    ReadSingleRun(doc, &model);
  } else {
    return Status::InvalidInput(path + ": unknown kind '" + EscapeControl(kind) + "'",
                                "valid kinds: none (a single run), cases, stage");
  }
  if (!Str(doc, "run_dir").empty()) model.run_dir = Str(doc, "run_dir");
  return model;
}

std::vector<std::string> LocalSlurmJobIds(const ReportModel& model) {
  std::vector<std::string> ids;
  for (const TimelineJob& job : model.jobs) {
    if (job.scenario != kLocalSlurmExecutor || job.job_id.empty()) continue;
    // Slurm job ids are digits (an array or het job: digits, '_' and '+').
    if (job.job_id.find_first_not_of("0123456789_+") != std::string::npos) continue;
    ids.push_back(job.job_id);
  }
  return ids;
}

std::map<std::string, SchedulerTimes> ParseSacctTimes(const std::string& text) {
  std::map<std::string, SchedulerTimes> times;
  auto local_time = [](const std::string& value) -> std::optional<double> {
    std::tm parts{};
    int consumed = 0;
    if (std::sscanf(value.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &parts.tm_year, &parts.tm_mon,
                    &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &consumed) != 6 ||
        consumed != static_cast<int>(value.size())) {
      return std::nullopt;  // "Unknown", "None"
    }
    parts.tm_year -= 1900;
    parts.tm_mon -= 1;
    parts.tm_isdst = -1;
    std::time_t at = std::mktime(&parts);
    if (at == static_cast<std::time_t>(-1)) return std::nullopt;
    return static_cast<double>(at);
  };
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1) {
      fields.push_back(line.substr(start, bar - start));
    }
    fields.push_back(line.substr(start));
    if (fields.size() < 5 || fields[0].empty()) continue;
    SchedulerTimes& entry = times[fields[0]];
    entry.submit = local_time(fields[1]);
    entry.start = local_time(fields[2]);
    entry.end = local_time(fields[3]);
    entry.state = fields[4];
  }
  return times;
}

void ApplySchedulerTimes(const std::map<std::string, SchedulerTimes>& times, ReportModel* model) {
  for (TimelineJob& job : model->jobs) {
    auto it = times.find(job.job_id);
    if (job.job_id.empty() || it == times.end()) continue;
    job.submit = it->second.submit;
    job.start = it->second.start;
    job.end = it->second.end;
    job.source = "sacct";
  }
}

}  // namespace trtllm_run::report
