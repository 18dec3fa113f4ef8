// The Failure Diagnosis table of spec 000, row by row, on real pytest output
// (tests/fixtures/pytest) and on work dirs with real files.
#include "supervise/diagnosis.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> FixtureLines(const std::string& name) {
  fs::path path = fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "pytest" / name;
  Result<std::string> text = ReadFile(path.string());
  REQUIRE(text.ok());
  std::vector<std::string> lines;
  std::string line;
  for (char c : text.value()) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/diagnosis_test_XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name, std::ios::binary) << text;
  }

 private:
  std::string path_;
};

TEST_CASE("FailedPytestTests: real pytest -v output lists the 3 failures with messages",
          "[diagnosis]") {
  std::vector<std::string> tests = FailedPytestTests(FixtureLines("failed_verbose.log"));
  CHECK(tests == std::vector<std::string>{
                     "tests/test_demo.py::test_fails - AssertionError: arithmetic is broken | "
                     "assert (1 + 1) == 3",
                     "tests/test_demo.py::test_param[2] - assert 2 == 1",
                     "tests/test_demo.py::TestGroup::test_method_raises - RuntimeError: boom"});
  // Passing tests and prose containing "FAILED" are not failures.
  CHECK(
      FailedPytestTests({"tests/a.py::test_ok PASSED [ 50%]", "the job FAILED to start", "FAILED"})
          .empty());
}

TEST_CASE("Exit 1 + FAILED: the failing tests and their messages", "[diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kFailed;
  in.exit_code = 1;
  in.workflow_type = "pytest";
  std::vector<std::string> lines = FixtureLines("failed_verbose.log");
  in.log_head.assign(lines.begin(), lines.begin() + 20);
  in.log_tail.assign(lines.end() - 20, lines.end());
  std::string text = DiagnoseFailure(in);
  // The head's failure section gives test_fails its whole message; the tail's sections and
  // summary the others', none borrowed across the gap between head and tail.
  CHECK_THAT(text, Catch::StartsWith("pytest: 3 test(s) failed: tests/test_demo.py::test_fails "
                                     "- AssertionError: arithmetic is broken | assert (1 + 1) == "
                                     "3; tests/test_demo.py::test_param[2] - assert 2 == 1; "));
  CHECK_THAT(text, Catch::Contains("TestGroup::test_method_raises - RuntimeError: boom"));
}

TEST_CASE("Exit 2 + ERROR: the first ImportError of the first 50 lines", "[diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kFailed;
  in.exit_code = 2;
  in.workflow_type = "pytest";
  in.log_head = FixtureLines("import_error.log");
  std::string text = DiagnoseFailure(in);
  CHECK_THAT(text, Catch::StartsWith("Collection/import failure: \"E   ModuleNotFoundError: No "
                                     "module named 'tensorrt_llm_not_installed'\""));
  // Without an import error, pytest's exit 2 still points at the first 50 lines.
  in.log_head = {"ERROR: usage: pytest [options]", "pytest: error: unrecognized arguments: -Q"};
  CHECK_THAT(DiagnoseFailure(in), Catch::Contains("first 50 lines"));
}

TEST_CASE("TIMEOUT, OUT_OF_MEMORY, CANCELLED, hang", "[diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kTimeout;
  in.monitor_timeout_seconds = 1800;
  in.time_limit = "02:00:00";
  CHECK(DiagnoseFailure(in) ==
        "Exceeded the time limit (monitor_timeout 30m, Slurm time_limit 02:00:00): increase "
        "--time-limit / --monitor-timeout, or check the log tail for where it stalled.");

  in = DiagnosisInput();
  in.status = RunStatus::kOutOfMemory;
  in.log_tail = {"step 3", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"};
  CHECK_THAT(DiagnoseFailure(in), Catch::StartsWith("Out of memory: reduce the batch size or "
                                                    "increase the nodes"));
  CHECK_THAT(DiagnoseFailure(in), Catch::Contains("Tried to allocate 2 GiB"));
  in.container_oom = true;
  in.memory_limit = "64m";
  CHECK_THAT(DiagnoseFailure(in), Catch::Contains("OOM killer stopped the container (memory "
                                                  "limit 64m)"));

  in = DiagnosisInput();
  in.status = RunStatus::kCancelled;
  in.job_id = "4242";
  CHECK_THAT(DiagnoseFailure(in), Catch::Contains("sacct -j 4242 --format=JobID,State,Reason"));

  in = DiagnosisInput();
  in.status = RunStatus::kHangDetected;
  in.log_file = "/w/x_local.log";
  in.log_tail = {"iteration 41", "[watchdog] Hang detected on rank 3"};
  std::string hang = DiagnoseFailure(in);
  CHECK_THAT(hang, Catch::Contains("GPU/NCCL deadlock"));
  CHECK_THAT(hang, Catch::Contains("terminated automatically"));
  CHECK_THAT(hang, Catch::Contains("Hang detected on rank 3"));
}

TEST_CASE("Empty output file: check the .err file", "[diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kFailed;
  in.exit_code = 1;
  in.log_empty = true;
  in.err_file = "/w/llama_auto_test_77.err";
  in.err_lines = {"", "pyxis: importing docker image: nvcr.io/x:y",
                  "slurmstepd: error: pyxis: "
                  "failed to import docker image"};
  std::string text = DiagnoseFailure(in);
  CHECK_THAT(text, Catch::StartsWith("Empty output file"));
  CHECK_THAT(text, Catch::Contains("check /w/llama_auto_test_77.err for mount/image errors"));
  CHECK_THAT(text, Catch::Contains("failed to import docker image"));
}

TEST_CASE("Invalid generic resource: drop --gres, and SSH Broken pipe", "[diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kError;
  in.errors = {
      "sbatch: error: Batch job submission failed: Invalid generic resource (gres) "
      "specification"};
  CHECK_THAT(DiagnoseFailure(in), Catch::Contains("omit --gres"));

  in = DiagnosisInput();
  in.status = RunStatus::kError;
  in.scenario = "remote_slurm";
  in.errors = {
      "ssh login.example.com: mux_client_request_session: read from master failed: "
      "Broken pipe"};
  CHECK_THAT(DiagnoseFailure(in), Catch::Contains("SSH ControlMaster connection died"));
  // A broken pipe of the job itself is not an SSH problem.
  in.scenario = "local_direct";
  in.errors = {};
  in.log_tail = {"BrokenPipeError: [Errno 32] Broken pipe"};
  CHECK(DiagnoseFailure(in).find("ControlMaster") == std::string::npos);
}

TEST_CASE("PASSED has no diagnosis, and without a rule the executor text stays", "[diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kPassed;
  in.log_tail = {"Hang detected", "out of memory"};
  CHECK(DiagnoseFailure(in).empty());
  in.status = RunStatus::kFailed;
  in.exit_code = 3;
  in.log_tail = {"plain failure"};
  CHECK(DiagnoseFailure(in).empty());
}

TEST_CASE("Diagnose reads the work dir: log head and tail, the newest .err file", "[diagnosis]") {
  ScratchDir dir;
  JobSpec spec;
  spec.scenario = "local_slurm";
  spec.workflow_type = "pytest";
  spec.work_dir = dir.path();
  spec.log_file = dir.path() + "/m_auto_test_12.out";
  std::string log;
  for (const std::string& line : FixtureLines("failed_verbose.log")) log += line + "\n";
  // Filler between head and tail: the summary is only in the last part of a big log.
  std::string filler;
  for (int i = 0; i < 20000; ++i) filler += "progress line " + std::to_string(i) + "\n";
  dir.Write("m_auto_test_12.out", filler + log);

  RunResult result;
  result.status = RunStatus::kFailed;
  result.exit_code = 1;
  result.diagnosis = "executor text";
  Diagnose(&result, spec);
  CHECK_THAT(result.diagnosis, Catch::StartsWith("pytest: 3 test(s) failed"));

  // An empty log with an .err file.
  dir.Write("m_auto_test_12.out", "");
  dir.Write("m_auto_test_12.err",
            "srun: error: Unable to create step: Invalid generic resource "
            "(gres) specification\n");
  result.diagnosis = "executor text";
  result.details["job_id"] = "12";
  Diagnose(&result, spec);
  CHECK_THAT(result.diagnosis, Catch::Contains("omit --gres"));
  CHECK_THAT(result.diagnosis, Catch::Contains("check " + dir.path() + "/m_auto_test_12.err"));

  // PASSED is left alone; a failure no rule explains keeps the executor's diagnosis.
  RunResult passed;
  passed.status = RunStatus::kPassed;
  Diagnose(&passed, spec);
  CHECK(passed.diagnosis.empty());
  dir.Write("m_auto_test_12.out", "some output\n");
  ::unlink((dir.path() + "/m_auto_test_12.err").c_str());
  RunResult plain;
  plain.status = RunStatus::kFailed;
  plain.exit_code = 3;
  plain.diagnosis = "executor text";
  Diagnose(&plain, spec);
  CHECK(plain.diagnosis == "executor text");
}

}  // namespace
}  // namespace trtllm_run
