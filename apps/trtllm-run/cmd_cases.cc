// The directory of a `run --cases` run seen later (cases_dir.h): `status`, `attach` and
// `cancel` of it (`plan --cases FILE` is cmd_plan_cases.cc).
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <signal.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "cli.h"
#include "runtime/cases_dir.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

std::string Counts(const CasesDirInfo& info) {
  std::map<std::string, int> counts;
  for (const CasesDirCase& one : info.cases) ++counts[one.status];
  std::string text = std::to_string(info.cases.size()) + " cases";
  std::string parts;
  for (const auto& [status, count] : counts) {
    parts += (parts.empty() ? "" : ", ") + std::to_string(count) + " " + status;
  }
  return parts.empty() ? text : text + " (" + parts + ")";
}

std::string CasesTable(const CasesDirInfo& info) {
  std::ostringstream out;
  out << std::left << std::setw(4) << "#" << std::setw(24) << "case" << std::setw(12) << "status"
      << std::setw(14) << "scenario" << std::setw(10) << "job id"
      << "work dir\n";
  for (const CasesDirCase& one : info.cases) {
    out << std::setw(4) << one.index << std::setw(24)
        << EscapeControl(one.name.empty() ? "-" : one.name) << std::setw(12)
        << EscapeControl(one.status) << std::setw(14)
        << EscapeControl(one.scenario.empty() ? "-" : one.scenario) << std::setw(10)
        << EscapeControl(one.job_id.empty() ? "-" : one.job_id)
        << EscapeControl(one.work_dir.empty() ? "-" : one.work_dir) << "\n";
  }
  return out.str();
}

std::string CasesDirJson(const CasesDirInfo& info) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  str("kind", "cases");
  str("run_dir", info.run_dir);
  str("phase", info.phase);
  w.Key("supervisor_alive");
  w.Bool(info.supervisor_alive);
  w.Key("exit_code");
  if (info.phase == "finished") {
    w.Int(info.exit_code);
  } else {
    w.Null();
  }
  w.Key("cases");
  w.StartArray();
  for (const CasesDirCase& one : info.cases) {
    w.StartObject();
    w.Key("index");
    w.Int(one.index);
    str("name", one.name);
    str("status", one.status);
    str("scenario", one.scenario);
    str("job_id", one.job_id);
    str("work_dir", one.work_dir);
    w.EndObject();
  }
  w.EndArray();
  w.Key("problems");
  w.StartArray();
  for (const std::string& problem : info.problems) w.String(problem.c_str());
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string StateLine(const CasesDirInfo& info) {
  if (info.phase == "finished") {
    return std::string("finished: ") + (info.exit_code == 0 ? "PASSED" : "NOT_PASSED") + " (exit " +
           std::to_string(info.exit_code) + ")";
  }
  if (info.phase == "abandoned") {
    return "abandoned: the supervising trtllm-run is gone and wrote no result.json";
  }
  std::string pid = info.state ? std::to_string(info.state->supervisor_pid) : "?";
  return "running (trtllm-run pid " + pid + (info.supervisor_alive ? ")" : ", on another host)");
}

}  // namespace

int CasesDirStatus(const std::string& dir, bool json) {
  Result<CasesDirInfo> info = InspectCasesDir(dir);
  if (!info.ok()) return Fail("status", info.status());
  if (json) {
    std::cout << CasesDirJson(info.value());
    return 0;
  }
  std::cout << "run dir:    " << EscapeControl(dir) << "\n"
            << "state:      " << StateLine(info.value()) << "\n"
            << "cases:      " << Counts(info.value()) << "\n";
  for (const std::string& problem : info->problems) {
    std::cout << "warning:    " << EscapeControl(problem) << "\n";
  }
  std::cout << CasesTable(info.value());
  return 0;
}

int CasesDirAttach(const std::string& dir, bool json, double poll) {
  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  std::map<int, std::string> seen;
  while (true) {
    Result<CasesDirInfo> info = InspectCasesDir(dir);
    if (!info.ok()) return Fail("attach", info.status());
    for (const CasesDirCase& one : info->cases) {
      std::string& last = seen[one.index];
      if (last == one.status) continue;
      last = one.status;
      std::cerr << "trtllm-run attach: case " << one.index
                << (one.name.empty() ? "" : " " + EscapeControl(one.name)) << ": "
                << EscapeControl(one.status) << "\n";
    }
    if (info->phase == "finished") {
      std::cerr << "\n" << CasesTable(info.value()) << Counts(info.value()) << "\n";
      if (json) std::cout << CasesDirJson(info.value()) << std::flush;
      return info->exit_code;
    }
    if (info->phase == "abandoned") {
      std::cerr << "trtllm-run attach: error: the supervising trtllm-run of " << EscapeControl(dir)
                << " ended without writing result.json; the verdicts are unknown\n"
                << "  hint: `trtllm-run status " << dir << "` shows each case\n";
      return kExitError;
    }
    if (cancel.cancelled()) {
      std::cerr << "\ntrtllm-run attach: detached; the cases keep running (`trtllm-run cancel "
                << dir << "` stops them)\n";
      return kExitUserInterrupt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(poll * 1000)));
  }
}

int CasesDirCancel(const std::string& dir, double wait, int kill_grace) {
  Result<CasesDirInfo> info = InspectCasesDir(dir);
  if (!info.ok()) return Fail("cancel", info.status());
  if (info->phase == "finished") {
    std::cout << "nothing to cancel: " << EscapeControl(dir) << " already finished\n";
    return 0;
  }
  if (info->supervisor_alive) {
    // The supervising `run --cases` cancels every case as on Ctrl-C and writes the verdicts.
    int pid = info->state->supervisor_pid;
    std::cerr << "trtllm-run cancel: asking trtllm-run (pid " << pid
              << ") to stop its cases (SIGTERM); waiting up to " << wait << "s\n";
    ::kill(pid, SIGTERM);
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<long long>(wait * 1000));
    while (std::chrono::steady_clock::now() < end) {
      Result<CasesDirInfo> now = InspectCasesDir(dir);
      if (now.ok() && now->phase != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  // Whatever is left: each case's own cancel, with its own proofs (workdir.h).
  int code = 0;
  Result<CasesDirInfo> now = InspectCasesDir(dir);
  if (!now.ok()) return Fail("cancel", now.status());
  for (const CasesDirCase& one : now->cases) {
    if (one.status != "running" && one.status != "abandoned") continue;
    // cases_state.json only claims its cases: each must name this run as its own.
    Status member = CheckCaseOfRun(one.work_dir, dir);
    if (!member.ok()) {
      code = Fail("cancel", member);
      continue;
    }
    std::string grace = std::to_string(kill_grace);
    std::vector<std::string> args = {"cancel", "--kill-grace", grace, one.work_dir};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int case_code = CancelMain(static_cast<int>(args.size()), argv.data());
    if (case_code != 0) code = case_code;
  }
  std::cout << "cancelled: " << EscapeControl(dir) << ": " << Counts(now.value()) << "\n";
  return code;
}

}  // namespace trtllm_run::cli
