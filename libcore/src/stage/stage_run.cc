// Running a planned CI stage (stage_run.h).
#include "stage/stage_run.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "model/dir_util.h"
#include "model/json_util.h"
#include "runtime/cases_array.h"
#include "stage/rerun_policy.h"
#include "trtllm_run/sdk/commands/test_list_line.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;
using stage::JUnitOutcome;
using stage::StageTestResult;

// Loaded into every pytest of a shard with -p: records each test's start and finish (a
// test started and never finished was running when its process ended: "unfinished"),
// and gives the tests with a TIMEOUT (N) in the list pytest-timeout's marker.
constexpr const char* kProgressPlugin = R"PY(# Written by trtllm-run stage.
import json
import os

import pytest

_PROGRESS = os.environ.get("TRTLLM_STAGE_PROGRESS")
_TIMEOUTS = os.environ.get("TRTLLM_STAGE_TIMEOUTS")


def _note(kind, nodeid):
    if _PROGRESS:
        with open(_PROGRESS, "a") as out:
            out.write(kind + " " + nodeid + "\n")


def pytest_runtest_logstart(nodeid, location):
    _note("start", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _note("finish", nodeid)


def pytest_collection_modifyitems(config, items):
    if not _TIMEOUTS or not os.path.exists(_TIMEOUTS):
        return
    with open(_TIMEOUTS) as source:
        timeouts = json.load(source)
    for item in items:
        seconds = timeouts.get(item.nodeid)
        if seconds:
            item.add_marker(pytest.mark.timeout(seconds))
)PY";

// One pytest process of a shard's job.
struct PytestProcess {
  std::vector<std::string> test_ids;     // the list lines it runs (StageTest::id)
  std::vector<std::string> pytest_args;  // how pytest is given them: ids, -k/-m EXPR
  std::vector<std::string> node_ids;     // each line's pytest id (selectors dropped)
  bool from_tests_dir = false;           // unittest/ ids run from tests/, as CI does
  std::string junit_path;
  std::string progress_path;
};

struct ShardJob {
  int split_id = 0;
  std::vector<std::string> test_ids;
  std::vector<PytestProcess> processes;
};

std::string SafeName(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  return out.empty() ? "stage" : out;
}

// Which tests a progress file says started and which finished.
void ReadProgress(const std::string& path, std::set<std::string>* started,
                  std::set<std::string>* finished) {
  auto text = ReadFile(path);
  if (!text.ok()) return;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("start ", 0) == 0) started->insert(line.substr(6));
    if (line.rfind("finish ", 0) == 0) finished->insert(line.substr(7));
  }
}

std::string FailureText(const stage::TestAttempt& attempt) {
  return attempt.message + "\n" + attempt.details;
}

bool NeedsRerun(const StageTestResult& test) {
  if (test.waived_reason || test.reused_reason) return false;
  if (test.attempts.empty()) return true;
  JUnitOutcome last = test.attempts.back().outcome;
  return last == JUnitOutcome::kFailed || last == JUnitOutcome::kError;
}

}  // namespace

std::string PytestCommand(const std::string& python, const std::string& dir,
                          const std::vector<std::string>& pytest_args,
                          const std::string& junit_path, const std::string& plugin_dir,
                          const std::string& progress_path, const std::string& timeouts_path) {
  std::string command =
      "(cd " + ShellQuote(dir) + " && PYTHONPATH=" + ShellQuote(plugin_dir) +
      "${PYTHONPATH:+:$PYTHONPATH} TRTLLM_STAGE_PROGRESS=" + ShellQuote(progress_path) +
      " TRTLLM_STAGE_TIMEOUTS=" + ShellQuote(timeouts_path) + " " + ShellQuote(python) +
      " -m pytest -v -p no:cacheprovider -p trtllm_stage_progress --rootdir=. "
      "--junitxml=" +
      ShellQuote(junit_path);
  for (const std::string& arg : pytest_args) command += " " + ShellQuote(arg);
  return command + ")";
}

namespace {

// Builds the round's jobs: per shard, one pytest for its ordinary tests and one per
// ISOLATION test.
std::vector<ShardJob> JobsOfRound(const std::map<int, std::vector<const StageTest*>>& by_split,
                                  int round, const std::string& junit_dir) {
  std::vector<ShardJob> jobs;
  for (const auto& [split_id, tests] : by_split) {
    ShardJob job;
    job.split_id = split_id;
    PytestProcess shared;
    std::vector<PytestProcess> isolated;
    for (const StageTest* test : tests) {
      job.test_ids.push_back(test->id);
      // The line's grammar (commands/test_list_line.h): -k/-m apply to a whole pytest, so
      // a line with them runs alone; so does a unittest/ id (run from tests/).
      std::string node_id = test->id;
      std::vector<std::string> args;
      bool alone = test->isolation;
      bool unittest = false;
      auto line = ParseTestListLine(test->id);
      if (line.ok() && line->has_value()) {
        const TestListLine& parsed = **line;
        node_id = parsed.id;
        args.push_back(parsed.id);
        if (parsed.k_expr) args.insert(args.end(), {"-k", *parsed.k_expr});
        if (parsed.m_expr) args.insert(args.end(), {"-m", *parsed.m_expr});
        unittest = parsed.IsUnittest();
        alone = alone || parsed.k_expr || parsed.m_expr || unittest;
      } else {
        args.push_back(test->id);
      }
      PytestProcess* into = &shared;
      if (alone) {
        isolated.emplace_back();
        into = &isolated.back();
        into->from_tests_dir = unittest;
      }
      into->test_ids.push_back(test->id);
      into->node_ids.push_back(node_id);
      into->pytest_args.insert(into->pytest_args.end(), args.begin(), args.end());
    }
    if (!shared.test_ids.empty()) job.processes.push_back(shared);
    for (PytestProcess& own : isolated) job.processes.push_back(own);
    for (std::size_t i = 0; i < job.processes.size(); ++i) {
      std::string stem = junit_dir + "/s" + std::to_string(split_id) + "_r" +
                         std::to_string(round) + "_" + std::to_string(i + 1);
      job.processes[i].junit_path = stem + ".xml";
      job.processes[i].progress_path = stem + ".progress";
    }
    if (!job.test_ids.empty()) jobs.push_back(std::move(job));
  }
  return jobs;
}

CaseEntry CaseOfJob(const ShardJob& job, int round, const StagePlan& plan,
                    const StageRunOptions& options, const std::string& run_dir) {
  const std::string repo_root = options.shared.repo_root.value_or(".");
  const std::string defs = (fs::path(repo_root) / "tests" / "integration" / "defs").string();
  const std::string tests_dir = (fs::path(repo_root) / "tests").string();
  // A job of N GPUs launches its command as N tasks (custom commands' layout); pytest
  // drives all of the job's GPUs from one process, so the other tasks leave at once.
  std::string script = "if [ \"${SLURM_PROCID:-0}\" != 0 ]; then exit 0; fi\nrc=0\n";
  for (const PytestProcess& process : job.processes) {
    script += PytestCommand(options.python, process.from_tests_dir ? tests_dir : defs,
                            process.pytest_args, process.junit_path, run_dir + "/pytest_plugin",
                            process.progress_path, run_dir + "/timeouts.json") +
              " || rc=$?\n";
  }
  script += "exit $rc\n";
  CaseEntry entry;
  entry.index = job.split_id;
  entry.name = plan.stage_name + " split " + std::to_string(job.split_id) + "/" +
               std::to_string(plan.split_count) +
               (round == 0 ? std::string() : " rerun " + std::to_string(round));
  entry.origin = "stage " + plan.stage_name + " split " + std::to_string(job.split_id);
  entry.request = options.shared;
  entry.request.custom_cmd = script;
  entry.request.custom_script.reset();
  entry.request.test_cmd.reset();
  if (!entry.request.model_name) {
    entry.request.model_name = SafeName(plan.stage_name) + "_s" + std::to_string(job.split_id) +
                               (round == 0 ? "" : "_r" + std::to_string(round));
  }
  // The stage's size: its GPUs (all nodes together in the stage table) on its nodes.
  if (!entry.request.required_devices && !entry.request.total_required_devices &&
      plan.gpu_count > 0) {
    if (plan.node_count > 1) {
      entry.request.total_required_devices = plan.gpu_count;
      entry.request.node_count = plan.node_count;
    } else {
      entry.request.required_devices = plan.gpu_count;
    }
  }
  entry.notes.push_back(std::to_string(job.test_ids.size()) + " test(s) in " +
                        std::to_string(job.processes.size()) + " pytest process(es)");
  return entry;
}

// Reads back what a round's pytest processes left: attempts from the JUnit files, and
// for tests without a result, whether they were running (unfinished) or never started.
// A shard job that did not pass must show why in its results: one whose pytest files say
// every test passed contradicts the scheduler or the process, and sets `*contradicted` (the
// job's own files never make a stage PASSED alone).
void CollectRound(const std::vector<ShardJob>& jobs, const MultiRunResult& multi,
                  std::vector<StageTestResult>* tests, std::map<std::string, bool>* unfinished,
                  std::set<std::string>* expanded, std::vector<std::string>* warnings,
                  bool* contradicted) {
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < tests->size(); ++i) index_of[(*tests)[i].id] = i;
  for (const ShardJob& job : jobs) {
    std::string verdict;
    bool job_passed = true;
    for (const CaseOutcome& outcome : multi.cases) {
      if (outcome.entry.index == job.split_id) {
        verdict = std::string(RunStatusName(outcome.result.status)) + ": " + outcome.result.reason;
        job_passed = outcome.result.status == RunStatus::kPassed ||
                     outcome.result.status == RunStatus::kCancelled;
      }
    }
    std::map<std::string, std::size_t> attempts_before_job;
    for (const StageTestResult& test : *tests) attempts_before_job[test.id] = test.attempts.size();
    for (const PytestProcess& process : job.processes) {
      std::vector<std::size_t> attempts_before(tests->size());
      for (std::size_t i = 0; i < tests->size(); ++i) {
        attempts_before[i] = (*tests)[i].attempts.size();
      }
      auto cases = stage::ReadJUnitFile(process.junit_path);
      if (cases.ok()) {
        // Only this process's tests (and tests its file ids expanded to) take attempts.
        // Matched by the id pytest was given (a line's selectors dropped), then named by
        // the line again.
        std::vector<StageTestResult> own;
        std::map<std::string, std::string> line_of_node;
        for (std::size_t i = 0; i < process.test_ids.size(); ++i) {
          own.push_back((*tests)[index_of[process.test_ids[i]]]);
          own.back().id = process.node_ids[i];
          line_of_node[process.node_ids[i]] = process.test_ids[i];
        }
        stage::AddAttempts(*cases, job.split_id, &own);
        std::set<std::string> kept;
        for (StageTestResult& result : own) {
          auto line = line_of_node.find(result.id);
          if (line != line_of_node.end()) result.id = line->second;
          kept.insert(result.id);
        }
        for (const std::string& id : process.test_ids) {
          if (!kept.count(id)) expanded->insert(id);  // a file id: its tests came one by one
        }
        for (StageTestResult& result : own) {
          auto found = index_of.find(result.id);
          if (found != index_of.end()) {
            (*tests)[found->second] = std::move(result);
          } else {
            index_of[result.id] = tests->size();
            tests->push_back(std::move(result));
          }
        }
      } else if (cases.status().code() != StatusCode::kNotFound) {
        warnings->push_back(cases.status().message());
      }
      std::set<std::string> started, finished;
      ReadProgress(process.progress_path, &started, &finished);
      bool any_unfinished = false;
      for (const std::string& node : started) any_unfinished |= finished.count(node) == 0;
      for (std::size_t i = 0; i < process.test_ids.size(); ++i) {
        const std::string& id = process.test_ids[i];
        const std::string& node = process.node_ids[i];
        if (expanded->count(id)) continue;
        StageTestResult& test = (*tests)[index_of[id]];
        if (test.attempts.size() > attempts_before[index_of[id]]) continue;  // has a result
        // A process of one line (ISOLATION, selectors) runs only its tests: any of them
        // left running makes the line unfinished.
        bool was_running = (started.count(node) && !finished.count(node)) ||
                           (process.test_ids.size() == 1 && any_unfinished);
        if (was_running) {
          (*unfinished)[id] = true;
          stage::TestAttempt attempt;
          attempt.outcome = JUnitOutcome::kError;
          attempt.message =
              "unfinished: its pytest process ended while it ran (the shard " + verdict + ")";
          test.attempts.push_back(attempt);
          test.not_run_reason.clear();
        } else if (test.attempts.empty()) {
          test.not_run_reason = "its shard ended before it started (" + verdict + ")";
        }
      }
    }
    if (!job_passed) {
      bool explained = false;
      for (const StageTestResult& test : *tests) {
        auto before = attempts_before_job.find(test.id);
        std::size_t from = before == attempts_before_job.end() ? 0 : before->second;
        for (std::size_t a = from; a < test.attempts.size(); ++a) {
          explained |= test.attempts[a].outcome == JUnitOutcome::kFailed ||
                       test.attempts[a].outcome == JUnitOutcome::kError;
        }
      }
      if (!explained) {
        *contradicted = true;
        warnings->push_back("split " + std::to_string(job.split_id) + ": the job ended " + verdict +
                            ", but its pytest results show no failing test: they cannot be "
                            "trusted, and the stage is not PASSED");
      }
    }
  }
}

// Runs one round (the shards, or a rerun round) through RunCases.
Result<MultiRunResult> RunRound(Runtime& runtime, const std::vector<ShardJob>& jobs, int round,
                                const StagePlan& plan, const StageRunOptions& options,
                                const std::string& run_dir) {
  std::vector<CaseEntry> cases;
  for (const ShardJob& job : jobs) cases.push_back(CaseOfJob(job, round, plan, options, run_dir));
  MultiRunOptions multi;
  multi.max_parallel = 32;
  multi.max_parallel_local = options.max_parallel_local > 0
                                 ? options.max_parallel_local
                                 : static_cast<int>(std::max<std::size_t>(1, jobs.size()));
  multi.progress = options.progress;
  multi.cancel = options.cancel;
  multi.kill_grace_seconds = options.kill_grace_seconds;
  multi.run_dir = run_dir + (round == 0 ? "/shards" : "/rerun_" + std::to_string(round));
  multi.cases_file = "stage " + plan.stage_name;
  // Per case, not as job arrays: arrays are not yet proven for a stage's shards and reruns.
  return RunCasesPerCase(runtime, cases, multi);
}

void RecordRound(const std::vector<ShardJob>& jobs, const MultiRunResult& multi, int round,
                 StageRunResult* result) {
  for (const ShardJob& job : jobs) {
    StageShardRun run;
    run.split_id = job.split_id;
    run.round = round;
    run.test_ids = job.test_ids;
    for (const CaseOutcome& outcome : multi.cases) {
      if (outcome.entry.index != job.split_id) continue;
      run.status = RunStatusName(outcome.result.status);
      run.reason = outcome.result.reason;
      run.job_id = outcome.job_id;
      run.work_dir = outcome.result.work_dir;
      run.seconds = outcome.result.duration_seconds;
    }
    result->shard_runs.push_back(std::move(run));
  }
}

}  // namespace

Result<StageRunResult> RunStage(Runtime& runtime, const StagePlan& plan,
                                const StageRunOptions& options) {
  auto start = std::chrono::steady_clock::now();
  StageRunResult result;
  result.stage_name = plan.stage_name;
  result.test_db_context = plan.test_db_context;
  result.splits = plan.splits;
  result.split_count = plan.split_count;
  result.started_at = NowIso8601();
  result.warnings = plan.warnings;
  const std::string repo_root = options.shared.repo_root.value_or(".");
  std::string planned_dir = options.run_dir;
  if (planned_dir.empty()) {
    planned_dir = (fs::path(repo_root) / "work_dirs" /
                   ("stage_" + SafeName(plan.stage_name) + "_" + LocalTimestamp()))
                      .string();
  }
  Result<std::string> made = CreateUniqueDir(planned_dir, "stage run dir");
  if (!made.ok()) return made.status();
  result.run_dir = fs::absolute(made.value()).string();
  const std::string junit_dir = result.run_dir + "/junit";
  std::error_code error;
  fs::create_directories(junit_dir, error);
  fs::create_directories(result.run_dir + "/pytest_plugin", error);
  TRTLLM_RUN_RETURN_IF_ERROR(
      WriteFileAtomic(result.run_dir + "/pytest_plugin/trtllm_stage_progress.py", kProgressPlugin));

  // The tests, in shard order; waived ones recorded, never submitted.
  std::map<std::string, const StageTest*> test_of;
  std::map<int, std::vector<const StageTest*>> by_split;
  rapidjson::StringBuffer timeouts;
  json::Writer timeouts_writer(timeouts);
  timeouts_writer.StartObject();
  for (const StageShard& shard : plan.shards) {
    if (shard.tests.empty()) {
      result.warnings.push_back("split " + std::to_string(shard.split_id) +
                                " has no tests: no job was submitted for it");
    }
    for (const StageTest& test : shard.tests) {
      StageTestResult record;
      record.id = test.id;
      record.split_id = shard.split_id;
      record.waived_reason = test.waived_reason;
      if (!test.waived_reason) record.reused_reason = test.reused_reason;
      result.tests.push_back(record);
      if (test.waived_reason || test.reused_reason) continue;
      test_of[test.id] = &test;
      by_split[shard.split_id].push_back(&test);
      if (test.timeout_seconds > 0) {
        json::WriteKey(&timeouts_writer, test.id);
        timeouts_writer.Int(test.timeout_seconds);
      }
    }
  }
  std::set<std::string> recorded;
  for (const StageTestResult& record : result.tests) recorded.insert(record.id);
  for (const StageTest& test : plan.waived) {
    if (!recorded.insert(test.id).second) continue;  // also in its shard, marked waived
    StageTestResult record;
    record.id = test.id;
    record.waived_reason = test.waived_reason.value_or("waived");
    result.tests.push_back(record);
  }
  timeouts_writer.EndObject();
  TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(
      result.run_dir + "/timeouts.json", std::string(timeouts.GetString(), timeouts.GetSize())));

  std::map<std::string, bool> unfinished;
  bool contradicted = false;  // a shard job that failed while its results show none
  std::set<std::string> expanded;
  std::vector<ShardJob> jobs = JobsOfRound(by_split, 0, junit_dir);
  bool cancelled = false;
  if (!jobs.empty()) {
    Result<MultiRunResult> round0 = RunRound(runtime, jobs, 0, plan, options, result.run_dir);
    if (!round0.ok()) return round0.status();
    result.sessions = round0->sessions;
    RecordRound(jobs, *round0, 0, &result);
    CollectRound(jobs, *round0, &result.tests, &unfinished, &expanded, &result.warnings,
                 &contradicted);
    for (const CaseOutcome& outcome : round0->cases) {
      if (outcome.result.status == RunStatus::kCancelled) cancelled = true;
    }
  }

  // CI's policy, decided once on the first run's outcome.
  std::map<std::string, int> reruns_left;
  for (StageTestResult& test : result.tests) {
    if (!NeedsRerun(test)) continue;
    stage::RerunDecision decision;
    if (unfinished.count(test.id)) {
      decision = stage::DecideReruns(stage::FirstRun::kUnfinished, 0, "", {});
    } else if (test.attempts.empty()) {
      decision = stage::DecideReruns(stage::FirstRun::kNotRun, 0, "", {});
    } else {
      const stage::TestAttempt& first = test.attempts.front();
      decision = stage::DecideReruns(stage::FirstRun::kFailed, first.seconds, FailureText(first),
                                     options.failure_signatures);
    }
    if (!options.reruns) decision = {0, "not rerun: --no-reruns"};
    test.rerun_note = decision.reason;
    reruns_left[test.id] = decision.reruns;
  }
  for (int round = 1; round <= 2 && options.reruns && !cancelled; ++round) {
    std::map<int, std::vector<const StageTest*>> again;
    for (const StageTestResult& test : result.tests) {
      auto left = reruns_left.find(test.id);
      if (left == reruns_left.end() || left->second < round || !NeedsRerun(test)) continue;
      auto planned = test_of.find(test.id);
      if (planned == test_of.end()) continue;  // a test a file id expanded to: its file reruns
      again[test.split_id].push_back(planned->second);
    }
    if (again.empty()) break;
    std::vector<ShardJob> rerun_jobs = JobsOfRound(again, round, junit_dir);
    if (options.progress) {
      std::size_t count = 0;
      for (const auto& [split, tests] : again) count += tests.size();
      *options.progress << "trtllm-run stage: rerun " << round << ": " << count << " test(s) in "
                        << rerun_jobs.size() << " job(s)\n";
    }
    Result<MultiRunResult> rerun =
        RunRound(runtime, rerun_jobs, round, plan, options, result.run_dir);
    if (!rerun.ok()) {
      result.warnings.push_back("rerun " + std::to_string(round) + ": " + rerun.status().message());
      break;
    }
    RecordRound(rerun_jobs, *rerun, round, &result);
    std::map<std::string, bool> ignored;
    CollectRound(rerun_jobs, *rerun, &result.tests, &ignored, &expanded, &result.warnings,
                 &contradicted);
    for (const CaseOutcome& outcome : rerun->cases) {
      if (outcome.result.status == RunStatus::kCancelled) cancelled = true;
    }
  }

  // A file id whose tests were reported one by one is replaced by them.
  std::vector<StageTestResult> kept_tests;
  for (StageTestResult& test : result.tests) {
    if (expanded.count(test.id) && test.attempts.empty()) continue;
    kept_tests.push_back(std::move(test));
  }
  result.tests = std::move(kept_tests);
  result.counts = stage::CountStage(result.tests);
  result.interrupted = cancelled && options.cancel && options.cancel->cancelled();
  if (cancelled) {
    result.status = "CANCELLED";
  } else if (result.counts.total == 0 || contradicted) {
    result.status = "ERROR";
  } else {
    result.status = result.counts.AllPassed() ? "PASSED" : "FAILED";
  }
  const stage::StageCounts& c = result.counts;
  result.reason = std::to_string(c.total) + " tests: " + std::to_string(c.passed) + " passed (" +
                  std::to_string(c.flaky) + " flaky), " + std::to_string(c.failed) + " failed (" +
                  std::to_string(c.not_run) + " not run), " + std::to_string(c.skipped) +
                  " skipped, " + std::to_string(c.waived) + " waived";
  result.junit_path = result.run_dir + "/" + SafeName(plan.stage_name) + ".xml";
  TRTLLM_RUN_RETURN_IF_ERROR(
      WriteFileAtomic(result.junit_path, stage::StageJUnit(plan.stage_name, result.tests)));
  result.finished_at = NowIso8601();
  result.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  TRTLLM_RUN_RETURN_IF_ERROR(
      WriteFileAtomic(result.run_dir + "/result.json", StageResultToJson(result)));
  return result;
}

int ExitCodeForStage(const StageRunResult& result) {
  if (result.status == "PASSED") return 0;
  if (result.status == "FAILED") return 1;
  if (result.status == "CANCELLED") return result.interrupted ? 130 : 6;
  return 3;
}

}  // namespace trtllm_run
