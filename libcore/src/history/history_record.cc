#include "history/history_record.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "stage/stage_run.h"
#include "trtllm_run/sdk/job_spec.h"

namespace trtllm_run::history {

namespace {

namespace fs = std::filesystem;

std::string FirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

// The commit a ref names in a git dir: the loose ref, else packed-refs.
std::string ResolveRef(const fs::path& git_dir, const std::string& ref) {
  std::error_code error;
  const fs::path loose = git_dir / ref;
  if (fs::is_regular_file(loose, error)) return FirstLine(loose);
  std::ifstream packed(git_dir / "packed-refs");
  std::string line;
  while (std::getline(packed, line)) {
    if (line.size() > 41 && line[40] == ' ' && line.compare(41, std::string::npos, ref) == 0) {
      return line.substr(0, 40);
    }
  }
  return "";
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace

std::string DefaultHistoryPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/trtllm-run/history.sqlite";
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  return std::string(home) + "/.local/share/trtllm-run/history.sqlite";
}

GitHead ReadGitHead(const std::string& repo_root) {
  GitHead head;
  if (repo_root.empty()) return head;
  std::error_code error;
  fs::path git_dir = fs::path(repo_root) / ".git";
  if (fs::is_regular_file(git_dir, error)) {  // a worktree or submodule: "gitdir: PATH"
    const std::string line = FirstLine(git_dir);
    if (line.rfind("gitdir: ", 0) != 0) return head;
    fs::path target = line.substr(8);
    git_dir = target.is_absolute() ? target : fs::path(repo_root) / target;
  }
  if (!fs::is_directory(git_dir, error)) return head;
  fs::path common_dir = git_dir;
  const std::string common = FirstLine(git_dir / "commondir");
  if (!common.empty()) {
    fs::path target = common;
    common_dir = target.is_absolute() ? target : git_dir / target;
  }
  const std::string head_line = FirstLine(git_dir / "HEAD");
  if (head_line.rfind("ref: ", 0) == 0) {
    const std::string ref = head_line.substr(5);
    if (ref.rfind("refs/heads/", 0) == 0) head.branch = ref.substr(11);
    head.commit = ResolveRef(git_dir, ref);
    if (head.commit.empty()) head.commit = ResolveRef(common_dir, ref);
  } else {
    head.commit = head_line;  // detached
  }
  if (head.commit.size() != 40 && head.commit.size() != 64) head.commit.clear();
  return head;
}

std::string FailureSignature(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) break;
  }
  std::string signature;
  for (std::size_t i = 0; i < line.size() && signature.size() < 160;) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (std::isdigit(c)) {
      if (c == '0' && i + 1 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X')) i += 2;
      while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
      signature += 'N';
    } else if (std::isspace(c)) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (!signature.empty()) signature += ' ';
    } else {
      signature += line[i++];
    }
  }
  while (!signature.empty() && signature.back() == ' ') signature.pop_back();
  return signature;
}

CaseRecord CaseRecordOf(const RunResult& result, const std::string& kind, const std::string& name) {
  CaseRecord record;
  record.kind = kind;
  record.command = result.command;
  record.name = name.empty() ? result.command : name;
  record.workflow = result.workflow_type;
  record.scenario = result.scenario;
  record.verdict = RunStatusName(result.status);
  if (result.status != RunStatus::kPassed && result.status != RunStatus::kSkipped) {
    record.signature =
        FailureSignature(result.diagnosis.empty() ? result.reason : result.diagnosis);
  }
  record.duration_seconds = result.duration_seconds;
  record.work_dir = result.work_dir;
  record.host = HostName();
  auto nodes = result.details.find("nodes");
  if (nodes != result.details.end()) record.nodes = nodes->second;
  if (!result.work_dir.empty()) {
    Result<JobSpec> spec = ReadJobSpec(result.work_dir);
    if (spec.ok()) {
      record.partition = spec->partition;
      record.cluster = spec->slurm_cluster;
      record.gpu_type = spec->device_type;
      GitHead head = ReadGitHead(spec->repo_root);
      record.commit = head.commit;
      record.branch = head.branch;
    }
  }
  for (const TestCaseOutcome& test : result.test_cases) {
    TestRecord row;
    row.node_id = test.name;
    row.outcome = test.outcome;
    if (test.outcome == "failed" || test.outcome == "error") {
      row.signature = FailureSignature(test.message);
    }
    record.tests.push_back(std::move(row));
  }
  return record;
}

std::vector<CaseRecord> StageRecordsOf(const StageRunResult& stage) {
  // Each test's attempts belong to the shard jobs that listed it, in round order. A test
  // may have fewer attempts than listings (its shard's job died before it: never started,
  // then rerun): its attempts are the last listings'. Without a listing (a selector line
  // pytest expanded into tests) attempt k is round k.
  std::map<std::pair<int, int>, std::vector<TestRecord>> by_run;  // (split, round)
  for (const stage::StageTestResult& test : stage.tests) {
    std::vector<int> rounds;
    for (const StageShardRun& shard : stage.shard_runs) {
      if (shard.split_id != test.split_id) continue;
      if (std::find(shard.test_ids.begin(), shard.test_ids.end(), test.id) ==
          shard.test_ids.end()) {
        continue;
      }
      rounds.push_back(shard.round);
    }
    std::sort(rounds.begin(), rounds.end());
    const std::size_t count = test.attempts.size();
    const bool listed = !rounds.empty() && rounds.size() >= count;
    for (std::size_t k = 0; k < count; ++k) {
      const stage::TestAttempt& attempt = test.attempts[k];
      const int round = listed ? rounds[rounds.size() - count + k] : static_cast<int>(k);
      TestRecord row;
      row.node_id = test.id;
      row.outcome = stage::JUnitOutcomeName(attempt.outcome);
      row.duration_seconds = attempt.seconds;
      row.attempt = round;
      if (attempt.outcome == stage::JUnitOutcome::kFailed ||
          attempt.outcome == stage::JUnitOutcome::kError) {
        row.signature = FailureSignature(attempt.message);
      }
      by_run[{test.split_id, round}].push_back(std::move(row));
    }
  }
  std::vector<CaseRecord> records;
  for (const StageShardRun& shard : stage.shard_runs) {
    CaseRecord record;
    record.kind = "stage";
    record.name = stage.stage_name + " shard " + std::to_string(shard.split_id) +
                  (shard.round ? " rerun " + std::to_string(shard.round) : "");
    record.stage = stage.stage_name;
    record.shard = shard.split_id;
    record.attempt = shard.round;
    record.verdict = shard.status;
    if (shard.status != "PASSED") record.signature = FailureSignature(shard.reason);
    record.duration_seconds = shard.seconds;
    record.work_dir = shard.work_dir;
    record.host = HostName();
    if (!shard.work_dir.empty()) {
      Result<JobSpec> spec = ReadJobSpec(shard.work_dir);
      if (spec.ok()) {
        record.workflow = spec->workflow_type;
        record.scenario = spec->scenario;
        record.partition = spec->partition;
        record.cluster = spec->slurm_cluster;
        record.gpu_type = spec->device_type;
        record.command = spec->direct_cmd;
        GitHead head = ReadGitHead(spec->repo_root);
        record.commit = head.commit;
        record.branch = head.branch;
      }
    }
    auto tests = by_run.find({shard.split_id, shard.round});
    if (tests != by_run.end()) {
      record.tests = std::move(tests->second);
      by_run.erase(tests);
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace trtllm_run::history
