#include "case_state.h"

#include <fcntl.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>

#include "model/dir_util.h"
#include "model/workdir_files.h"
#include "runtime/cases_dir.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"
#include "trtllm_run/workdir_state.h"

namespace trtllm_run::mcp {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxChunkBytes = 262144;  // of one case_log answer (schemas.cc)

std::string Join(const std::string& dir, const std::string& name) { return dir + "/" + name; }

// A regular file itself, not a symlink to one.
bool IsFile(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

const char* Advice(const std::string& status) {
  static const std::map<std::string, const char*> kAdvice = {
      {"PASSED", "done: the case passed"},
      {"FAILED",
       "the command failed: read reason and diagnosis, then case_log (offset -65536 shows the "
       "log's end); fix the code or test and run it again"},
      {"SKIPPED",
       "nothing was tested: every selected test was skipped (e.g. too few GPUs here); run it "
       "where the tests' requirements hold (more GPUs, another device_type or cluster)"},
      {"TIMEOUT",
       "it ran past monitor_timeout (or Slurm's time limit): case_log shows where it stalled; "
       "raise monitor_timeout/time_limit only if it was still making progress"},
      {"HANG_DETECTED",
       "a hang detector line appeared: read the log around it and the stack dumps; a deadlock "
       "(NCCL, MPI) is not fixed by running it again"},
      {"OUT_OF_MEMORY",
       "out of memory (OOM killer, Slurm memory limit or CUDA OOM): use smaller batch or "
       "sequence sizes, more GPUs (tp), or nodes with more memory"},
      {"CANCELLED", "it was cancelled (reason says by whom); run it again if that was not meant"},
      {"ERROR",
       "an infrastructure problem, not a test verdict (could not start, node failure, missing "
       "records): read reason, fix the environment (image, partition, account, paths), run "
       "again"},
      {"running", "call wait_case again (at most 100 s per call); case_log shows the output"},
      {"starting", "its trtllm-run exec is starting it: call wait_case"},
      {"not_started", "planned only: run_case with this handle starts it"},
      {"abandoned",
       "its supervising trtllm-run ended without a verdict: last_lines and supervisor.log say "
       "why; cancel_case stops whatever is left"},
  };
  auto it = kAdvice.find(status);
  return it == kAdvice.end() ? "" : it->second;
}

// The verdict name of a `run --cases` exit code (most severe verdict first).
std::string StatusOfCasesExit(int code) {
  switch (code) {
    case kExitPassed:
      return "PASSED";
    case kExitFailed:
      return "FAILED";
    case kExitTimeout:
      return "TIMEOUT";
    case kExitHangDetected:
      return "HANG_DETECTED";
    case kExitCancelled:
    case kExitUserInterrupt:
      return "CANCELLED";
    case kExitOutOfMemory:
      return "OUT_OF_MEMORY";
    case kExitSkipped:
      return "SKIPPED";
    default:
      return "ERROR";
  }
}

// A case work dir: the library's reader (workdir_state.h, as `trtllm-run status` reads
// it), plus what only the server knows (its mcp_exec.json and supervisor.log).
Status ReadSingleCase(const std::string& handle, const StateOptions& options, CaseState* state) {
  WorkDirStateOptions read_options;
  read_options.log_lines = options.log_lines;
  read_options.registry = options.registry;
  Result<WorkDirState> read = ReadWorkDirState(handle, read_options);
  if (!read.ok()) return read.status();
  const WorkDirInfo& info = read->info;
  state->scenario = info.spec.scenario;
  state->workflow = info.spec.workflow_type;
  state->model_name = info.spec.model_name;
  state->log_file = info.log_file;
  state->recorded_dir = info.spec.work_dir;
  state->log_bytes = read->log_bytes;
  state->job_id = read->job_id;
  state->slurm_state = read->job.scheduler_state;
  state->slurm_reason = read->job.scheduler_reason;
  std::optional<SpawnRecord> spawn;
  if (Result<SpawnRecord> record = ReadSpawnRecord(Join(handle, kExecRecordFile)); record.ok()) {
    spawn = record.value();
  }
  std::string started_at = spawn ? spawn->started_at : "";
  if (info.state) {
    state->supervisor_pid = info.state->supervisor_pid;
    state->supervisor_alive = info.supervisor_alive;
    if (!read->started_at.empty()) started_at = read->started_at;
  } else if (spawn) {
    state->supervisor_pid = spawn->pid;
    state->supervisor_alive = SupervisorProven(*spawn, handle);
  }
  state->elapsed_s = SecondsSince(started_at);
  switch (info.phase) {
    case WorkDirPhase::kFinished: {
      const RunResult& result = *info.result;
      state->status = RunStatusName(result.status);
      state->finished = true;
      state->exit_code = ExitCodeFor(result);
      state->reason = result.reason;
      state->diagnosis = result.diagnosis;
      state->elapsed_s = result.duration_seconds;
      state->result_json = ResultToJson(result);
      break;
    }
    case WorkDirPhase::kRunning:
      state->status = "running";
      state->reason = "supervised by trtllm-run pid " + std::to_string(state->supervisor_pid) +
                      (info.same_host ? "" : " on host " + info.state->host);
      break;
    case WorkDirPhase::kAbandoned:
      state->status = "abandoned";
      state->reason = "the supervising trtllm-run (pid " + std::to_string(state->supervisor_pid) +
                      ") ended without writing result.json";
      break;
    case WorkDirPhase::kNotStarted:
      if (!spawn) {
        state->status = "not_started";
        state->reason = "prepared (job_spec.json); nothing was started";
      } else if (state->supervisor_alive) {
        state->status = "starting";
        state->reason = "trtllm-run exec (pid " + std::to_string(spawn->pid) + ") is starting it";
      } else {
        state->status = "abandoned";
        std::vector<std::string> why = ReadLastLines(handle, Join(handle, kSupervisorLogFile), 1);
        state->reason = "trtllm-run exec (pid " + std::to_string(spawn->pid) +
                        ") ended before it started the case" +
                        (why.empty() ? "" : ": " + why.back());
      }
      break;
  }
  for (const std::string& problem : info.problems) state->reason += "; warning: " + problem;
  if (!info.log_refused.empty()) state->reason += "; log not read: " + info.log_refused;
  if (!info.location_problem.empty()) state->reason += "; " + info.location_problem;
  state->last_lines = read->last_lines;
  // Before the supervisor recorded its run, its own output is all there is to show. Once
  // the run is recorded, the case's lines are its job's: an empty log is shown empty, not
  // filled with the supervisor's start-up messages (e.g. plugin warnings of its runtime).
  if (state->last_lines.empty() && !state->finished && !info.state) {
    state->last_lines = ReadLastLines(handle, Join(handle, kSupervisorLogFile), options.log_lines);
  }
  return Status::Ok();
}

// The cases a running `run --cases` started so far: the work dirs its cases_state.json
// names in `run_dir` (cases_dir.h InspectCasesDir), each read as a single work dir. Never
// from the supervisor's log, and never recursing into another handle: what a work dir
// names cannot make this reader loop.
std::vector<CaseItem> StartedCases(const std::string& run_dir) {
  std::vector<CaseItem> items;
  Result<CasesDirInfo> info = InspectCasesDir(run_dir);
  if (!info.ok()) return items;
  for (const CasesDirCase& one : info->cases) {
    if (one.work_dir.empty()) continue;  // not started yet
    CaseItem item;
    item.name = one.name.empty() ? "case " + std::to_string(one.index) : one.name;
    item.handle = one.work_dir;
    item.status = one.status;
    item.job_id = one.job_id;
    items.push_back(item);
  }
  return items;
}

// The handle's supervisor.log as the state shows it: its path, size and last lines.
void ReadSupervisorLog(const std::string& handle, const StateOptions& options, CaseState* state) {
  const std::string supervisor_log = Join(handle, kSupervisorLogFile);
  state->log_file = supervisor_log;
  state->log_bytes = WorkDirFileSize(handle, supervisor_log);
  state->last_lines = ReadLastLines(handle, supervisor_log, options.log_lines);
}

void ReadCasesRun(const std::string& handle, const StateOptions& options, CaseState* state) {
  state->kind = "cases";
  std::string run_dir = handle;
  std::optional<SpawnRecord> spawn;
  if (Result<SpawnRecord> record = ReadSpawnRecord(Join(handle, kCasesRecordFile)); record.ok()) {
    spawn = record.value();
    run_dir = Join(handle, "run");  // where run_cases put it, whatever the record says
    state->supervisor_pid = spawn->pid;
    state->supervisor_alive = SupervisorProven(*spawn, handle);
    state->elapsed_s = SecondsSince(spawn->started_at);
  }
  ReadSupervisorLog(handle, options, state);
  // run_dir is <handle>/run or the handle: read beneath the handle, no symlink followed.
  Result<std::string> text = ReadFileInDir(
      handle, run_dir == handle ? std::string("result.json") : std::string("run/result.json"));
  Document doc;
  if (text.ok()) doc.Parse(text->c_str(), text->size());
  if (text.ok() && !doc.HasParseError() && doc.IsObject()) {
    const Value* exit_code = Member(doc, "exit_code");
    int code = exit_code && exit_code->IsInt() ? exit_code->GetInt() : kExitError;
    state->status = StatusOfCasesExit(code);
    state->finished = true;
    state->exit_code = code;
    state->result_json = text.value();
    const Value* duration = Member(doc, "duration_seconds");
    if (duration && duration->IsNumber()) state->elapsed_s = duration->GetDouble();
    const Value* cases = Member(doc, "cases");
    std::map<std::string, int> counts;
    for (rapidjson::SizeType i = 0; cases && cases->IsArray() && i < cases->Size(); ++i) {
      const Value& entry = (*cases)[i];
      CaseItem item;
      auto get = [&](const char* key) {
        const Value* v = Member(entry, key);
        return v && v->IsString() ? std::string(v->GetString()) : std::string();
      };
      item.name = get("name");
      item.status = get("status");
      item.handle = get("work_dir");
      item.job_id = get("job_id");
      ++counts[item.status];
      state->cases.push_back(item);
    }
    state->reason = std::to_string(state->cases.size()) + " case(s):";
    for (const auto& [status, count] : counts) {
      state->reason += " " + std::to_string(count) + " " + status;
    }
    return;
  }
  struct stat run_st {};  // <handle>/run itself a symlink: its cases are not this handle's
  if (run_dir == handle || (::lstat(run_dir.c_str(), &run_st) == 0 && S_ISDIR(run_st.st_mode))) {
    state->cases = StartedCases(run_dir);
  }
  if (state->supervisor_alive) {
    state->status = "running";
    state->reason = std::to_string(state->cases.size()) + " case(s) started so far";
  } else {
    state->status = "abandoned";
    state->reason = "the supervising trtllm-run run --cases ended without the combined result";
  }
}

// A run_stage handle: `trtllm-run stage` runs in <handle>/run. Its shard jobs are the
// multi-case runs shards/ (round 0), rerun_1/ and rerun_2/; once it ended, result.json
// holds every shard job and the per-test outcomes.
void ReadStageRun(const std::string& handle, const StateOptions& options, CaseState* state) {
  state->kind = "stage";
  const std::string supervisor_log = Join(handle, kSupervisorLogFile);
  if (Result<SpawnRecord> record = ReadSpawnRecord(Join(handle, kStageRecordFile)); record.ok()) {
    state->supervisor_pid = record->pid;
    state->supervisor_alive = SupervisorProven(record.value(), handle);
    state->elapsed_s = SecondsSince(record->started_at);
  }
  // The scenario run_stage was asked for (a field of the request file it wrote for the
  // stage's shared request): every shard job runs there. Empty when routing chose.
  if (Result<std::string> request = ReadFileInDir(handle, "shared_request.json"); request.ok()) {
    Document fields;
    fields.Parse(request->c_str(), request->size());
    const Value* scenario =
        !fields.HasParseError() && fields.IsObject() ? Member(fields, "scenario") : nullptr;
    if (scenario && scenario->IsString()) state->scenario = scenario->GetString();
  }
  ReadSupervisorLog(handle, options, state);
  Result<std::string> text = ReadFileInDir(handle, "run/result.json");
  Document doc;
  if (text.ok()) doc.Parse(text->c_str(), text->size());
  if (text.ok() && !doc.HasParseError() && doc.IsObject()) {
    const Value* exit_code = Member(doc, "exit_code");
    const int code = exit_code && exit_code->IsInt() ? exit_code->GetInt() : kExitError;
    state->status = StatusOfCasesExit(code);
    state->finished = true;
    state->exit_code = code;
    state->result_json = text.value();
    const Value* duration = Member(doc, "duration_seconds");
    if (duration && duration->IsNumber()) state->elapsed_s = duration->GetDouble();
    auto get = [](const Value& object, const char* key) {
      const Value* v = Member(object, key);
      return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength())
             : v && v->IsInt()  ? std::to_string(v->GetInt())
                                : std::string();
    };
    const Value* runs = Member(doc, "shard_runs");
    for (rapidjson::SizeType i = 0; runs && runs->IsArray() && i < runs->Size(); ++i) {
      const Value& run = (*runs)[i];
      const std::string round = get(run, "round");
      CaseItem item;
      item.name = "split " + get(run, "split_id") +
                  (round.empty() || round == "0" ? "" : " rerun " + round);
      item.status = get(run, "status");
      item.handle = get(run, "work_dir");
      item.job_id = get(run, "job_id");
      state->cases.push_back(item);
    }
    if (const Value* counts = Member(doc, "counts"); counts && counts->IsObject()) {
      state->reason = "stage " + get(doc, "stage") + ":";
      for (const char* key :
           {"total", "passed", "flaky", "failed", "not_run", "skipped", "waived"}) {
        const Value* count = Member(*counts, key);
        if (count && count->IsInt()) {
          state->reason += " " + std::to_string(count->GetInt()) + " " + key;
        }
      }
      state->reason += " (per-test outcomes: result.tests)";
    }
    return;
  }
  // Running: the shard jobs started so far, round by round; each reads as a run_cases
  // case (name, status, work dir, job id). Only real directories beneath the handle.
  const std::string run_dir = Join(handle, "run");
  struct stat run_st {};
  if (::lstat(run_dir.c_str(), &run_st) == 0 && S_ISDIR(run_st.st_mode)) {
    const std::pair<const char*, const char*> kRounds[] = {
        {"shards", ""}, {"rerun_1", " rerun 1"}, {"rerun_2", " rerun 2"}};
    for (const auto& [dir, suffix] : kRounds) {
      const std::string round_dir = Join(run_dir, dir);
      struct stat st {};
      if (::lstat(round_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      for (CaseItem item : StartedCases(round_dir)) {
        // "<stage> split 2/3" -> "split 2", as result.json's shard runs are named.
        const std::size_t split = item.name.rfind("split ");
        if (split != std::string::npos) {
          item.name = item.name.substr(split, item.name.find_first_of("/ ", split + 6) - split);
        }
        item.name += suffix;
        state->cases.push_back(item);
      }
    }
  }
  if (state->supervisor_alive) {
    state->status = "running";
    std::map<std::string, int> counts;
    for (const CaseItem& item : state->cases) ++counts[item.status];
    state->reason = std::to_string(state->cases.size()) + " shard job(s) started so far";
    for (const auto& [status, count] : counts) {
      state->reason += ", " + std::to_string(count) + " " + status;
    }
  } else {
    state->status = "abandoned";
    std::vector<std::string> why = ReadLastLines(handle, supervisor_log, 1);
    state->reason = "the supervising trtllm-run stage ended without the stage's result" +
                    (why.empty() ? std::string() : ": " + why.back());
  }
}

}  // namespace

Status WriteSpawnRecord(const std::string& path, const SpawnRecord& record) {
  Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  Set(&doc, "supervisor_pid", Value(record.pid), a);
  Set(&doc, "supervisor_start_time", Value(static_cast<uint64_t>(record.start_time)), a);
  SetStr(&doc, "started_at", record.started_at, a);
  Set(&doc, "argv", StrArray(record.argv, a), a);
  if (!record.cases_file.empty()) SetStr(&doc, "cases_file", record.cases_file, a);
  if (!record.run_dir.empty()) SetStr(&doc, "run_dir", record.run_dir, a);
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return WriteFileAtomic(path, std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

Result<SpawnRecord> ReadSpawnRecord(const std::string& path) {
  Result<std::string> text = ReadWorkDirFile(path);
  if (!text.ok()) return text.status();
  Document doc;
  doc.Parse(text->c_str(), text->size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Status::InvalidInput(path + " is not a JSON object");
  }
  SpawnRecord record;
  auto str = [&](const char* key) {
    const Value* v = Member(doc, key);
    return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
  };
  const Value* pid = Member(doc, "supervisor_pid");
  const Value* start = Member(doc, "supervisor_start_time");
  record.pid = pid && pid->IsInt() ? pid->GetInt() : 0;
  record.start_time = start && start->IsUint64() ? start->GetUint64() : 0;
  record.started_at = str("started_at");
  record.cases_file = str("cases_file");
  record.run_dir = str("run_dir");
  if (const Value* argv = Member(doc, "argv"); argv && argv->IsArray()) {
    for (const Value& arg : argv->GetArray()) {
      if (arg.IsString()) record.argv.push_back(arg.GetString());
    }
  }
  return record;
}

bool SupervisorProven(const SpawnRecord& record, const std::string& handle) {
  if (record.pid <= 1 || record.start_time == 0 || record.argv.empty()) return false;
  if (!SameProcessAlive(record.pid, record.start_time)) return false;
  bool names_handle =
      std::find(record.argv.begin(), record.argv.end(), handle) != record.argv.end() ||
      std::find(record.argv.begin(), record.argv.end(), Join(handle, "run")) != record.argv.end();
  if (!names_handle) return false;
  Result<std::string> cmdline = ReadFile("/proc/" + std::to_string(record.pid) + "/cmdline");
  std::string expected;
  for (const std::string& arg : record.argv) expected += arg + '\0';
  return cmdline.ok() && cmdline.value() == expected;
}

Result<std::string> CheckHandle(const std::string& handle) {
  const char* hint =
      "a handle is the work dir plan_case, run_case, run_cases or run_stage returned; "
      "list_cases lists "
      "the recent ones";
  if (handle.empty()) return Status::InvalidInput("the handle is empty", hint);
  std::error_code error;
  std::string dir = fs::absolute(handle, error).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!fs::is_directory(dir, error)) {
    return Status::NotFound("handle '" + EscapeControl(handle) + "' does not exist", hint);
  }
  if (IsFile(Join(dir, "job_spec.json")) || IsFile(Join(dir, kCasesRecordFile)) ||
      IsFile(Join(dir, kStageRecordFile))) {
    return dir;
  }
  Result<std::string> text = ReadWorkDirFile(Join(dir, "result.json"));
  if (text.ok() && text->find("\"kind\": \"cases\"") != std::string::npos) return dir;
  return Status::InvalidInput(
      "'" + dir + "' is not a trtllm-run work dir (no job_spec.json, no " + kCasesRecordFile + ")",
      hint);
}

// The report its supervisor writes after the verdict (kReportFile): its path once it
// exists; pending while a supervisor started with --html is still alive without it.
void AddReport(CaseState* state) {
  const std::string path = Join(state->handle, kReportFile);
  if (IsFile(path)) {
    state->report = path;
    return;
  }
  if (!state->finished) return;
  for (const char* record_file : {kExecRecordFile, kCasesRecordFile, kStageRecordFile}) {
    Result<SpawnRecord> record = ReadSpawnRecord(Join(state->handle, record_file));
    if (!record.ok()) continue;
    const bool asked =
        std::find(record->argv.begin(), record->argv.end(), "--html") != record->argv.end();
    state->report_pending = asked && SupervisorProven(record.value(), state->handle);
    return;
  }
}

Result<CaseState> ReadCaseState(const std::string& handle, const StateOptions& options) {
  Result<std::string> dir = CheckHandle(handle);
  if (!dir.ok()) return dir.status();
  CaseState state;
  state.handle = dir.value();
  if (IsFile(Join(state.handle, "job_spec.json"))) {
    TRTLLM_RUN_RETURN_IF_ERROR(ReadSingleCase(state.handle, options, &state));
  } else if (IsFile(Join(state.handle, kStageRecordFile))) {
    ReadStageRun(state.handle, options, &state);
  } else {
    ReadCasesRun(state.handle, options, &state);
  }
  state.next = Advice(state.status);
  AddReport(&state);
  return state;
}

Value CaseStateToJson(const CaseState& state, Allocator& a) {
  Value out(rapidjson::kObjectType);
  auto str_or_null = [&](const char* key, const std::string& value) {
    Set(&out, key, value.empty() ? Value() : Str(value, a), a);
  };
  SetStr(&out, "handle", state.handle, a);
  SetStr(&out, "kind", state.kind, a);
  SetStr(&out, "status", state.status, a);
  Set(&out, "finished", Value(state.finished), a);
  Set(&out, "exit_code", state.exit_code ? Value(*state.exit_code) : Value(), a);
  SetStr(&out, "reason", state.reason, a);
  SetStr(&out, "diagnosis", state.diagnosis, a);
  SetStr(&out, "scenario", state.scenario, a);
  SetStr(&out, "workflow", state.workflow, a);
  SetStr(&out, "model_name", state.model_name, a);
  str_or_null("job_id", state.job_id);
  str_or_null("slurm_state", state.slurm_state);
  str_or_null("slurm_reason", state.slurm_reason);
  Set(&out, "elapsed_s", state.elapsed_s ? Value(*state.elapsed_s) : Value(), a);
  Set(&out, "waited_s", Value(state.waited_s), a);
  SetStr(&out, "log_file", state.log_file, a);
  Set(&out, "log_bytes", Value(static_cast<uint64_t>(state.log_bytes)), a);
  Set(&out, "last_lines", StrArray(state.last_lines, a), a);
  Set(&out, "supervisor_pid", state.supervisor_pid > 0 ? Value(state.supervisor_pid) : Value(), a);
  Set(&out, "supervisor_alive", Value(state.supervisor_alive), a);
  Value result;
  if (!state.result_json.empty()) ParseInto(state.result_json, a, &result);
  Set(&out, "result", result, a);
  Value cases(rapidjson::kArrayType);
  for (const CaseItem& item : state.cases) {
    Value entry(rapidjson::kObjectType);
    SetStr(&entry, "name", item.name, a);
    SetStr(&entry, "status", item.status, a);
    SetStr(&entry, "handle", item.handle, a);
    Set(&entry, "job_id", item.job_id.empty() ? Value() : Str(item.job_id, a), a);
    cases.PushBack(entry, a);
  }
  Set(&out, "cases", cases, a);
  SetStr(&out, "next", state.next, a);
  if (state.report.empty()) {
    Set(&out, "report", Value(rapidjson::kNullType), a);
  } else {
    SetStr(&out, "report", state.report, a);
  }
  return out;
}

Document CaseStateDocument(const CaseState& state) {
  Document doc;
  Value value = CaseStateToJson(state, doc.GetAllocator());
  static_cast<Value&>(doc) = std::move(value);
  return doc;
}

std::string CaseStateText(const CaseState& state) {
  std::ostringstream out;
  out << state.status << ": " << state.handle;
  if (!state.scenario.empty()) out << " (" << state.scenario << ")";
  if (!state.job_id.empty()) out << ", Slurm job " << state.job_id;
  if (!state.slurm_state.empty()) out << " " << state.slurm_state;
  if (state.elapsed_s) out << ", " << static_cast<long long>(*state.elapsed_s) << " s";
  out << "\n";
  if (!state.reason.empty()) out << "reason: " << state.reason << "\n";
  if (!state.diagnosis.empty()) out << "diagnosis: " << state.diagnosis << "\n";
  if (!state.finished && !state.last_lines.empty()) {
    out << "last line: " << state.last_lines.back() << "\n";
  }
  if (!state.report.empty()) out << "report: " << state.report << "\n";
  out << "next: " << state.next;
  return out.str();
}

Result<LogChunk> ReadLogChunk(const CaseState& state, std::int64_t offset, std::size_t max_bytes) {
  const std::string& path = state.log_file;
  // Opened as the CLI's readers open work dir files (workdir.h OpenWorkDirFile: a regular
  // file inside the directory, no symlink out, never blocking).
  Result<int> opened = path.empty() ? Result<int>(Status::NotFound(path))
                                    : OpenWorkDirFile(state.handle, path, state.recorded_dir);
  if (!opened.ok()) {
    return Status::NotFound("the log '" + path + "' cannot be read (yet)",
                            "the job has not written output yet: call wait_case first");
  }
  const int fd = opened.value();
  max_bytes = std::min(max_bytes, kMaxChunkBytes);
  LogChunk chunk;
  struct stat st {};
  chunk.size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  std::uint64_t start = 0;
  if (offset < 0) {
    std::uint64_t back = static_cast<std::uint64_t>(-offset);
    start = back > chunk.size ? 0 : chunk.size - back;
  } else {
    start = std::min<std::uint64_t>(static_cast<std::uint64_t>(offset), chunk.size);
  }
  std::string bytes(std::min<std::uint64_t>(max_bytes, chunk.size - start), '\0');
  ssize_t n =
      bytes.empty() ? 0 : ::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(start));
  ::close(fd);
  bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  // Start and end on character boundaries (continuation bytes are 10xxxxxx).
  std::size_t skip = 0;
  while (skip < bytes.size() && skip < 3 && start > 0 &&
         (static_cast<unsigned char>(bytes[skip]) & 0xC0) == 0x80) {
    ++skip;
  }
  std::size_t end = bytes.size();
  if (start + end < chunk.size) {
    std::size_t back = 0;
    while (back < 3 && back < end &&
           (static_cast<unsigned char>(bytes[end - 1 - back]) & 0xC0) == 0x80) {
      ++back;
    }
    if (back < end && static_cast<unsigned char>(bytes[end - 1 - back]) >= 0xC0) end -= back + 1;
  }
  if (end < skip) end = skip;
  chunk.offset = start + skip;
  chunk.next_offset = start + end;
  chunk.text = ValidUtf8(std::string_view(bytes).substr(skip, end - skip));
  return chunk;
}

Result<std::string> ResolveRepoRootDir(const std::string& given) {
  std::error_code error;
  if (!given.empty()) {
    fs::path root = fs::absolute(given, error);
    if (error || !fs::is_directory(root, error)) {
      return Status::InvalidInput("repo_root '" + EscapeControl(given) + "' is not a directory",
                                  "give the TensorRT-LLM checkout the cases ran in");
    }
    return fs::weakly_canonical(root, error).string();
  }
  fs::path cwd = fs::current_path(error);
  if (error) return Status::IoError("cannot read the current directory: " + error.message());
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return cwd.string();
}

std::vector<CaseState> ListCases(const std::string& repo_root, int limit) {
  std::vector<std::pair<std::int64_t, std::string>> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fs::path(repo_root) / "work_dirs", error)) {
    struct stat st {};  // lstat: a symlink under work_dirs is never listed, so never followed
    std::string path = entry.path().string();
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (!CheckHandle(path).ok()) continue;
    dirs.emplace_back(
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, path);
  }
  std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<CaseState> states;
  StateOptions quick;
  quick.log_lines = 0;
  for (const auto& [mtime, path] : dirs) {
    if (static_cast<int>(states.size()) >= limit) break;
    Result<CaseState> state = ReadCaseState(path, quick);
    if (state.ok()) states.push_back(state.value());
  }
  return states;
}

std::optional<double> SecondsSince(const std::string& iso_utc) {
  std::tm tm{};
  const char* end = ::strptime(iso_utc.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  std::time_t then = ::timegm(&tm);
  return std::max(0.0, std::difftime(std::time(nullptr), then));
}

}  // namespace trtllm_run::mcp
