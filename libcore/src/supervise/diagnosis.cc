// The Failure Diagnosis table of spec 000 (diagnosis.h).
#include "supervise/diagnosis.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <optional>
#include <set>
#include <string_view>

#include "model/dir_util.h"
#include "model/slurm_pending.h"
#include "trtllm_run/sdk/pytest_log.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

constexpr std::size_t kHeadLines = 50;          // spec: "check first 50 lines"
constexpr std::size_t kHeadBytes = 64 * 1024;   // of the log, for the head
constexpr std::size_t kTailBytes = 256 * 1024;  // of the log, for pytest summaries
constexpr std::size_t kErrBytes = 16 * 1024;    // of the .err file
constexpr std::size_t kErrLinesShown = 3;
constexpr std::size_t kMaxTestsListed = 10;
constexpr std::size_t kMaxLineShown = 300;

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  return AsciiLower(haystack).find(AsciiLower(needle)) != std::string::npos;
}

std::string Shown(const std::string& line) {
  std::string text(Trim(line));
  if (text.size() > kMaxLineShown) text = text.substr(0, kMaxLineShown) + "...";
  return text;
}

// The first line of any of `groups` that contains `needle` (case-insensitive).
const std::string* FindLine(std::initializer_list<const std::vector<std::string>*> groups,
                            std::string_view needle) {
  for (const std::vector<std::string>* lines : groups) {
    for (const std::string& line : *lines) {
      if (ContainsNoCase(line, needle)) return &line;
    }
  }
  return nullptr;
}

// The first import failure in `lines`: preferably the exception line itself
// ("E   ModuleNotFoundError: No module named 'x'", "ImportError: cannot import name"),
// else any line that mentions one ("ImportError while importing test module ...").
const std::string* FindImportError(const std::vector<std::string>& lines) {
  const std::string* mention = nullptr;
  for (const std::string& line : lines) {
    bool import_error = line.find("ImportError") != std::string::npos;
    bool module_error = line.find("ModuleNotFoundError") != std::string::npos;
    if (!import_error && !module_error) continue;
    std::string text(Trim(line));
    if (text.rfind("E ", 0) == 0) text = Trim(text.substr(2));
    if (text.rfind("ImportError:", 0) == 0 || text.rfind("ModuleNotFoundError:", 0) == 0) {
      return &line;
    }
    if (!mention) mention = &line;
  }
  return mention;
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// The most recently modified *.err file in `dir`, or "".
std::string NewestErrFile(const std::string& dir) {
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return "";
  std::string best;
  long long best_mtime = -1;
  while (dirent* entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".err") != 0) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (st.st_mtime > best_mtime) {
      best_mtime = st.st_mtime;
      best = path;
    }
  }
  ::closedir(handle);
  return best;
}

std::string FormatSeconds(int seconds) {
  if (seconds % 3600 == 0 && seconds >= 3600) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0 && seconds >= 60) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

// Whether `lines` are pytest's own output: its session header, its summary or its usage
// error. The pytest findings read the log, not the workflow's name: any workflow may run
// pytest.
bool IsPytestLog(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    if (line.find("test session starts") != std::string::npos ||
        line.find("short test summary info") != std::string::npos ||
        line.rfind("ERROR: usage: pytest", 0) == 0 || line.rfind("pytest: error:", 0) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> FailedPytestTests(const std::vector<std::string>& lines) {
  std::string log;
  for (const std::string& line : lines) log += line + "\n";
  std::vector<std::string> tests;
  for (const TestCaseOutcome& test : pytest_log::ParseLog(log).tests) {
    if (test.outcome != "failed") continue;
    tests.push_back(test.message.empty() ? test.name : test.name + " - " + Shown(test.message));
  }
  return tests;
}

namespace {

// What the status alone says: a hang, out of memory, a time limit, all skipped, cancelled.
void AddStatusFindings(const DiagnosisInput& in, std::vector<std::string>* findings) {
  switch (in.status) {
    case RunStatus::kHangDetected: {
      if (in.silence_timeout_seconds > 0) {
        findings->push_back(
            "No output for " + FormatSeconds(in.silence_timeout_seconds) +
            " (--silence-timeout): the job was stopped as hung. A deadlock (GPU/NCCL, a "
            "collective waiting for a rank that died or never started), a stuck download or "
            "a prompt waiting for input is likely; the log's last lines show where it stopped" +
            (in.log_file.empty() ? std::string() : " (" + in.log_file + ")") +
            ". Raise --silence-timeout if the job legitimately works that long without "
            "printing.");
        break;
      }
      const std::string* line = FindLine({&in.log_tail, &in.log_head}, "hang detected");
      findings->push_back(
          "'hang detected' in the log: GPU/NCCL deadlock likely. The job was terminated "
          "automatically; check the log lines before it for the root cause" +
          (in.log_file.empty() ? std::string() : " (" + in.log_file + ")") +
          (line ? ": \"" + Shown(*line) + "\"" : std::string()) + ".");
      break;
    }
    case RunStatus::kOutOfMemory:
      if (in.container_oom) {
        findings->push_back(
            "Out of memory: the kernel OOM killer stopped the container" +
            (in.memory_limit.empty() ? std::string() : " (memory limit " + in.memory_limit + ")") +
            ". Raise or drop --docker-memory, reduce the batch size, or use more nodes.");
      } else {
        const std::string* line =
            FindLine({&in.log_tail, &in.log_head, &in.err_lines}, "out of memory");
        const bool here =
            in.target == DiagnosisTarget::kHost || in.target == DiagnosisTarget::kContainer;
        findings->push_back(std::string("Out of memory: reduce the batch size or ") +
                            (here ? "use more GPUs" : "increase the nodes (GPUs)") +
                            (line ? ": \"" + Shown(*line) + "\"" : std::string()) + ".");
      }
      break;
    case RunStatus::kTimeout: {
      if (in.reason.rfind("pytest-timeout stopped ", 0) == 0) {
        // The test's own limit (pytest-timeout), not the job's: see the pytest workflow.
        findings->push_back(
            "A test ran past its own pytest-timeout limit (a test list's TIMEOUT (N) minutes, "
            "a --timeout in the command, or PYTEST_TIMEOUT, 3600 s by default): raise TIMEOUT "
            "(N) on the list line if it needs longer, or read its stack in the log for where "
            "it hung.");
        break;
      }
      std::string limits;
      if (in.monitor_timeout_seconds > 0) {
        limits = "monitor_timeout " + FormatSeconds(in.monitor_timeout_seconds);
      }
      if (!in.time_limit.empty()) {
        limits += (limits.empty() ? "" : ", ") + std::string("Slurm time_limit ") + in.time_limit;
      }
      findings->push_back(
          "Exceeded the time limit" + (limits.empty() ? std::string() : " (" + limits + ")") +
          ": increase " +
          (in.time_limit.empty() && in.target != DiagnosisTarget::kUnknown
               ? std::string("--monitor-timeout")
               : std::string("--time-limit") +
                     (in.monitor_timeout_seconds > 0 ? " / --monitor-timeout" : "")) +
          ", or check the log tail for where it stalled.");
      break;
    }
    case RunStatus::kSkipped:
      findings->push_back(
          "Every selected test was skipped, so nothing was tested. TensorRT-LLM's conftest "
          "skips a test when the machine has fewer GPUs (or GPU memory) than its "
          "skip_less_device / skip_less_device_memory markers ask for: run it where enough "
          "GPUs are visible (--required-devices, a GPU partition), or read the skip reasons "
          "above.");
      break;
    case RunStatus::kCancelled:
      findings->push_back(
          "Preempted or user-cancelled" +
          (in.job_id.empty()
               ? std::string(".")
               : ": see `sacct -j " + in.job_id + " --format=JobID,State,Reason` for the reason."));
      break;
    default:
      break;
  }
}

// Lines that name a cluster or connection problem: --gres unsupported, a dead SSH master.
void AddClusterFindings(const DiagnosisInput& in, std::vector<std::string>* findings) {
  auto all = {&in.err_lines, &in.errors, &in.log_head, &in.log_tail};
  std::vector<std::string> reason_lines = {in.reason};
  if (const std::string* line = FindLine(all, "Invalid generic resource")) {
    findings->push_back("The cluster does not support --gres on this partition (\"" + Shown(*line) +
                        "\"): omit --gres; the partition's gres is (null) in slurm_env.json.");
  }
  if (const std::string* line = FindLine({&in.errors, &reason_lines, &in.err_lines}, "Broken pipe");
      line && (ContainsNoCase(*line, "ssh") || ContainsNoCase(*line, "mux") || in.remote)) {
    findings->push_back("The SSH ControlMaster connection died (\"" + Shown(*line) +
                        "\"): trtllm-run opens a new one on its next command; re-run, or follow "
                        "the job with `trtllm-run attach`.");
  }
}

// Why the job never started or printed nothing.
void AddStartFindings(const DiagnosisInput& in, std::vector<std::string>* findings) {
  if (!in.pending_reason.empty()) {
    std::optional<HopelessPendingReason> row = FindHopelessPendingReason(in.pending_reason);
    std::string text =
        "The job never started: Slurm kept it pending with reason " + in.pending_reason;
    if (row) {
      text += " (" + row->meaning + "), which waiting cannot clear. Fix: " + row->fix + ".";
    } else {
      text += " until --max-pending ran out" +
              (in.job_id.empty() ? std::string()
                                 : " (`squeue -j " + in.job_id + " -o %r` shows the reason)") +
              ". Give a longer --max-pending, or a --partition or size that starts sooner.";
    }
    findings->push_back(text);
  } else if (in.log_empty && in.status != RunStatus::kCancelled &&
             (in.target == DiagnosisTarget::kHost || in.target == DiagnosisTarget::kContainer)) {
    findings->push_back(in.target == DiagnosisTarget::kHost
                            ? "Empty output file: the command printed nothing before it ended; "
                              "check the errors above (the command, its working directory)."
                            : "Empty output file: the container failed to start before printing "
                              "anything; check the errors above for image and mount errors.");
  } else if (in.log_empty && in.status != RunStatus::kCancelled) {
    std::string text =
        "Empty output file: the container (or job) failed to start before printing anything; ";
    if (!in.err_file.empty()) {
      text += "check " + in.err_file + " for mount/image errors";
      std::size_t shown = 0;
      for (const std::string& line : in.err_lines) {
        if (Trim(line).empty()) continue;
        text += (shown == 0 ? ": \"" : " | ") + Shown(line);
        if (++shown == kErrLinesShown) break;
      }
      if (shown > 0) text += "\"";
    } else {
      text += "check the scheduler's .err file and the errors above for mount/image errors";
    }
    findings->push_back(text + ".");
  }
}

// Failed pytest tests, collection/import failures.
void AddPytestFindings(const DiagnosisInput& in, std::vector<std::string>* findings) {
  const bool pytest = IsPytestLog(in.log_head) || IsPytestLog(in.log_tail);
  if (in.status == RunStatus::kFailed || in.status == RunStatus::kError) {
    // The head and the tail are read apart: joined, a failure section cut by the gap would
    // lend its test the next section's message.
    std::vector<std::string> tests = FailedPytestTests(in.log_head);
    for (const std::string& test : FailedPytestTests(in.log_tail)) {
      const std::string id = test.substr(0, test.find(" - "));
      auto known = std::find_if(tests.begin(), tests.end(), [&](const std::string& seen) {
        return seen.substr(0, seen.find(" - ")) == id;
      });
      if (known == tests.end()) {
        tests.push_back(test);
      } else if (known->size() == id.size()) {
        *known = test;  // the tail's summary line adds the message
      }
    }
    if (!tests.empty() && (pytest || in.status == RunStatus::kFailed)) {
      std::string text = "pytest: " + std::to_string(tests.size()) + " test(s) failed: ";
      for (std::size_t i = 0; i < tests.size() && i < kMaxTestsListed; ++i) {
        text += (i ? "; " : "") + tests[i];
      }
      if (tests.size() > kMaxTestsListed) text += "; ...";
      findings->push_back(text + ".");
    }
  }
  if ((in.exit_code == 2 || in.status == RunStatus::kError) && in.status != RunStatus::kPassed) {
    const std::string* import_line = FindImportError(in.log_head);
    if (!import_line) import_line = FindImportError(in.log_tail);
    if (import_line) {
      findings->push_back("Collection/import failure: \"" + Shown(*import_line) +
                          "\"; check the environment (skip_install? the image's packages).");
    } else if (pytest && in.exit_code == 2) {
      findings->push_back(
          "pytest exit 2: collection or usage error; check the first 50 lines of the log.");
    }
  }
}

}  // namespace

std::string DiagnoseFailure(const DiagnosisInput& in) {
  if (in.status == RunStatus::kPassed) return "";
  std::vector<std::string> findings;
  AddStatusFindings(in, &findings);
  AddClusterFindings(in, &findings);
  AddStartFindings(in, &findings);
  AddPytestFindings(in, &findings);
  std::string text;
  for (const std::string& finding : findings) text += (text.empty() ? "" : "\n") + finding;
  return text;
}

void Diagnose(RunResult* result, const JobSpec& spec) {
  if (result == nullptr || result->status == RunStatus::kPassed) return;
  DiagnosisInput in;
  in.status = result->status;
  in.exit_code = result->exit_code;
  in.workflow_type = !result->workflow_type.empty() ? result->workflow_type : spec.workflow_type;
  in.scenario = !result->scenario.empty() ? result->scenario : spec.scenario;
  in.remote = !spec.ssh_host.empty() || !spec.remote_work_dir.empty();
  in.log_file = !result->log_file.empty() ? result->log_file : spec.log_file;
  in.errors = result->errors;
  in.reason = result->reason;
  in.monitor_timeout_seconds = result->monitor_timeout_seconds > 0 ? result->monitor_timeout_seconds
                                                                   : spec.monitor_timeout_seconds;
  if (spec.slurm_params) in.time_limit = spec.slurm_params->time_limit;
  if (in.time_limit.empty()) in.time_limit = spec.time_limit;
  auto detail = [&](const char* key) {
    auto it = result->details.find(key);
    return it == result->details.end() ? std::string() : it->second;
  };
  in.job_id = detail("job_id");
  in.target = spec.slurm_params || !in.job_id.empty() ? DiagnosisTarget::kBatch
              : spec.container_runtime == "docker"    ? DiagnosisTarget::kContainer
                                                      : DiagnosisTarget::kHost;
  in.container_oom = detail("oom_killed") == "true";
  in.memory_limit = detail("memory_limit");
  in.pending_reason = detail("pending_reason");
  if (std::optional<long long> silence =
          ParseInteger(detail("silence_timeout_seconds"), 1, INT_MAX)) {
    in.silence_timeout_seconds = static_cast<int>(*silence);
  }

  std::uint64_t size = 0;
  std::string head;
  if (!in.log_file.empty() && ReadSlice(in.log_file, 0, kHeadBytes, &head, &size)) {
    in.log_empty = size == 0;
    in.log_head = SplitLines(head);
    if (in.log_head.size() > kHeadLines) in.log_head.resize(kHeadLines);
    if (size > kHeadBytes) {
      std::string tail;
      std::uint64_t ignored = 0;
      if (ReadSlice(in.log_file, -static_cast<long long>(kTailBytes), kTailBytes, &tail,
                    &ignored)) {
        in.log_tail = SplitLines(tail);
        if (size > kTailBytes && !in.log_tail.empty()) {
          in.log_tail.erase(in.log_tail.begin());  // a partial first line
        }
      }
    } else {
      in.log_tail = SplitLines(head);
    }
  } else {
    in.log_empty = true;
    in.log_tail = result->log_tail;
  }

  std::string dir = !result->work_dir.empty() ? result->work_dir : spec.work_dir;
  if (!dir.empty()) in.err_file = NewestErrFile(dir);
  if (!in.err_file.empty()) {
    std::string err;
    std::uint64_t ignored = 0;
    if (ReadSlice(in.err_file, 0, kErrBytes, &err, &ignored)) in.err_lines = SplitLines(err);
  }
  std::string text = DiagnoseFailure(in);
  if (!text.empty()) result->diagnosis = text;
}

}  // namespace trtllm_run
