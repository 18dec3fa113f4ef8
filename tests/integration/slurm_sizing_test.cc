// Slurm sizing before submission, through the trtllm-run binary on the real test
// clusters (tests/services/slurm.sh): trtllm-test (partitions debug with MaxTime 2 h,
// batch with 2 GPUs as gres, cpu without GPU gres) and trtllm-noacct (no slurmdbd).
// Bad sizing is exit 2 with nothing submitted and no work dir; CPU-only work, partition
// lists and clusters without accounting run to a verdict; --custom-env with a command
// that is not custom is refused.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

const char kNoAccountingConf[] = "/etc/slurm-noacct/slurm.conf";

// local_slurm without a container (the test cluster has no pyxis), in repo `repo`.
CliOptions SlurmCli(const std::string& verb, const std::string& repo,
                    std::vector<std::string> args) {
  CliOptions options;
  options.args = {verb,          "--repo-root",       repo,   "--scenario",
                  "local_slurm", "--skip-install",    "true", "--container-runtime",
                  "none",        "--container-image", "none"};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.cwd = repo;
  options.timeout_seconds = 120;
  return options;
}

bool NoWorkDir(const std::string& repo) {
  std::error_code error;
  fs::path dir = fs::path(repo) / "work_dirs";
  return !fs::exists(dir, error) || fs::is_empty(dir, error);
}

std::string Status(const std::string& work_dir) {
  rapidjson::Document result = ReadResultJson(work_dir);
  return result.IsObject() && result.HasMember("status") ? result["status"].GetString() : "";
}

std::string ResolutionNotes(const std::string& work_dir) {
  rapidjson::Document doc;
  doc.Parse(ReadTextFile(work_dir + "/job_spec.json").c_str());
  if (doc.HasParseError() || !doc.HasMember("resolution_notes")) return "";
  return doc["resolution_notes"].GetString();
}

// The #SBATCH lines of the one batch script in the work dir.
std::string SbatchLines(const std::string& work_dir) {
  std::string lines;
  for (const auto& entry : fs::directory_iterator(work_dir)) {
    if (entry.path().extension() != ".slurm") continue;
    std::string text = ReadTextFile(entry.path().string());
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      if (line.rfind("#SBATCH ", 0) == 0) lines += line + "\n";
      start = end + 1;
    }
  }
  return lines;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Exit 2 from `run`, nothing submitted (no work dir), stderr holding every `parts`.
void ExpectRefused(const std::string& repo, std::vector<std::string> args,
                   const std::vector<std::string>& parts) {
  CliRun run = RunCli(SlurmCli("run", repo, args));
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(NoWorkDir(repo));
  for (const std::string& part : parts) {
    INFO(part);
    CHECK(Contains(run.stderr_text, part));
  }
}

}  // namespace

TEST_CASE("slurm sizing: GPUs asked for on the cpu partition (no GPU gres) are exit 2",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  ExpectRefused(repo.path(),
                {"--partition", "cpu", "--required-devices", "1", "--custom-cmd", "echo hi"},
                {"1 GPU(s) per node (--required-devices 1)", "partition cpu has no GPU GRES",
                 "--partition with GPUs", "--required-devices 0"});

  // Derived from the test's marker: real pytest would only skip it there.
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_two.py",
                "import pytest\n\n@pytest.mark.skip_less_device(2)\ndef test_two():\n    pass\n");
  ExpectRefused(repo.path(),
                {"--partition", "cpu", "--test-cmd", "pytest tests/test_two.py::test_two"},
                {"2 GPU(s) per node (the test's GPU marker)", "partition cpu has no GPU GRES"});
}

TEST_CASE("slurm sizing: --time-limit above the partition's MaxTime is exit 2", "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  ExpectRefused(repo.path(),
                {"--partition", "debug", "--time-limit", "03:00:00", "--custom-cmd", "echo hi"},
                {"time_limit 03:00:00 (--time-limit)", "MaxTime 02:00:00 of partition debug",
                 "give --time-limit 02:00:00 or less", "batch MaxTime infinite"});
}

TEST_CASE("slurm sizing: more GPUs per node than batch's 2 are exit 2 naming the fix",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  ExpectRefused(repo.path(),
                {"--partition", "batch", "--required-devices", "3", "--custom-cmd", "echo hi"},
                {"required_devices = 3", "gpus_per_node = 2", "--required-devices 2",
                 "--partition with at least 3 GPUs per node"});
  // Before, sbatch refused this one after the work dir was made: ERROR, not exit 2.
  ExpectRefused(repo.path(),
                {"--partition", "batch", "--eval-cmd",
                 "trtllm-eval --model m --tp_size 3 --gpus_per_node 3 "
                 "gsm8k"},
                {"3 GPU(s) per node (tp x pp of the eval command)",
                 "partition batch has 2 GPUs per node", "--tp_size x --pp_size of at most 2"});
}

TEST_CASE("slurm sizing: a monitor_timeout longer than the time limit is a note", "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  CliRun run = RunCli(SlurmCli("plan", repo.path(),
                               {"--partition", "batch", "--time-limit", "00:10:00",
                                "--monitor-timeout", "30m", "--custom-cmd", "echo hi"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK(Contains(run.stdout_text + run.stderr_text,
                 "note: monitor_timeout 00:30:00 (--monitor-timeout) is longer than the job's "
                 "time limit 00:10:00 (--time-limit)"));
}

TEST_CASE("slurm sizing: --required-devices 0 runs CPU-only work on cpu to PASSED",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_cpu.py", "def test_cpu():\n    assert 1 + 1 == 2\n");
  CliRun run = RunCli(SlurmCli("run", repo.path(),
                               {"--partition", "cpu", "--required-devices", "0", "--test-cmd",
                                "pytest -v tests/test_cpu.py"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  CHECK(Status(work_dir) == "PASSED");
  std::string sbatch = SbatchLines(work_dir);
  INFO(sbatch);
  CHECK(Contains(sbatch, "#SBATCH --partition=cpu"));
  CHECK_FALSE(Contains(sbatch, "--gres"));
  CHECK(Contains(run.stdout_text, "1 passed"));
}

TEST_CASE("slurm sizing: a custom command that asks for no GPU runs on cpu with a note",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  CliRun run =
      RunCli(SlurmCli("run", repo.path(), {"--partition", "cpu", "--custom-cmd", "echo on cpu"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  CHECK(Status(work_dir) == "PASSED");
  CHECK_FALSE(Contains(SbatchLines(work_dir), "--gres"));
  CHECK(Contains(ResolutionNotes(work_dir),
                 "partition cpu has no GPU GRES (gres (null)): the job runs without --gres, as "
                 "no GPU count was asked for"));
}

TEST_CASE("custom_env with a test_cmd is exit 2 with a prefix hint, no work dir",
          "[cli][bad_input]") {
  TempDir repo("trtllm_sizing");
  // A real test that needs the variable: dropping it silently would make it fail.
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_a.py",
                "import os\n\ndef test_a():\n    assert os.environ.get('A') == '1'\n");
  CliOptions options;
  options.args = {"run",
                  "--repo-root",
                  repo.path(),
                  "--scenario",
                  "local_direct",
                  "--test-cmd",
                  "pytest -q tests/test_a.py",
                  "--custom-env",
                  "A=1"};
  options.cwd = repo.path();
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(NoWorkDir(repo.path()));
  CHECK(Contains(run.stderr_text, "custom_env (--custom-env) applies only to the custom workflow"));
  CHECK(Contains(run.stderr_text, "--test-cmd 'A=1 pytest -q tests/test_a.py'"));

  // The hint's command works: the variable reaches the test.
  options.args = {"run",
                  "--repo-root",
                  repo.path(),
                  "--scenario",
                  "local_direct",
                  "--test-cmd",
                  "A=1 pytest -q tests/test_a.py"};
  CliRun prefixed = RunCli(options);
  INFO(prefixed.Describe());
  CHECK(prefixed.exit_code == 0);
  CHECK(Status(FindSingleWorkDir(repo.path())) == "PASSED");
}

TEST_CASE("slurm without accounting (trtllm-noacct) through the CLI, with and without --account",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  SECTION("no account: none needed, no #SBATCH --account line") {
    CliOptions options = SlurmCli("run", repo.path(), {"--custom-cmd", "echo noacct job"});
    options.env = {{"SLURM_CONF", kNoAccountingConf}};
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    std::string work_dir = FindSingleWorkDir(repo.path());
    REQUIRE(!work_dir.empty());
    CHECK(Status(work_dir) == "PASSED");
    CHECK_FALSE(Contains(SbatchLines(work_dir), "--account"));
    CHECK(Contains(run.stderr_text,
                   "account: none needed, submitting without --account: accounting is disabled "
                   "on this cluster"));
    CHECK(Contains(run.stdout_text, "noacct job"));
  }
  SECTION("--account: used as is") {
    CliOptions options =
        SlurmCli("run", repo.path(), {"--account", "anyteam", "--custom-cmd", "echo noacct job"});
    options.env = {{"SLURM_CONF", kNoAccountingConf}};
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    std::string work_dir = FindSingleWorkDir(repo.path());
    REQUIRE(!work_dir.empty());
    CHECK(Status(work_dir) == "PASSED");
    CHECK(Contains(SbatchLines(work_dir), "#SBATCH --account=anyteam"));
    CHECK(Contains(run.stderr_text, "account anyteam (--account) used as is, not validated"));
  }
}

TEST_CASE("slurm partition lists: batch,debug runs, an unknown member is named", "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_sizing");
  ExpectRefused(repo.path(), {"--partition", "batch,nosuch", "--custom-cmd", "echo hi"},
                {"partition 'nosuch' (in 'batch,nosuch', --partition) does not exist"});

  CliRun run = RunCli(
      SlurmCli("run", repo.path(), {"--partition", "batch,debug", "--custom-cmd", "echo listed"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  CHECK(Status(work_dir) == "PASSED");
  std::string sbatch = SbatchLines(work_dir);
  CHECK(Contains(sbatch, "#SBATCH --partition=batch,debug"));
  CHECK(Contains(sbatch, "#SBATCH --gres=gpu:1"));
}
