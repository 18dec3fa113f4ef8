// Lean Slurm jobs, through the trtllm-run binary on the real test cluster
// (tests/services/slurm.sh, no pyxis): a custom command gets no install step unless asked
// (--skip-install false), job_spec.json says build_project true only where a build runs
// (local_slurm never builds), and with --container-runtime none no container image is
// needed, looked up or shown: a repo without jenkins/current_image_tags.properties runs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

// local_slurm without a container and without --container-image or --skip-install.
CliOptions LeanCli(const std::string& verb, const std::string& repo,
                   std::vector<std::string> args) {
  CliOptions options;
  options.args = {verb,          "--repo-root",         repo,  "--scenario",
                  "local_slurm", "--container-runtime", "none"};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.cwd = repo;
  options.timeout_seconds = 120;
  return options;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

rapidjson::Document JobSpecOf(const std::string& work_dir) {
  rapidjson::Document doc;
  doc.Parse(ReadTextFile(work_dir + "/job_spec.json").c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

// The one batch script of the work dir.
std::string BatchScriptOf(const std::string& work_dir) {
  for (const auto& entry : fs::directory_iterator(work_dir)) {
    if (entry.path().extension() == ".slurm") return ReadTextFile(entry.path().string());
  }
  return "";
}

std::string Str(const rapidjson::Document& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

}  // namespace

TEST_CASE(
    "lean scripts: a custom command with container_runtime none needs no image and "
    "installs nothing",
    "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_lean");  // no jenkins/current_image_tags.properties
  CliRun run = RunCli(
      LeanCli("run", repo.path(), {"--partition", "cpu", "--custom-cmd", "echo lean-job-ran"}));
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK_FALSE(Contains(run.stderr_text, "no container image"));
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(Str(result, "status") == "PASSED");

  const std::string script = BatchScriptOf(work_dir);
  INFO(script);
  CHECK_FALSE(Contains(script, "pip install"));
  CHECK_FALSE(Contains(script, "run_step install"));
  CHECK_FALSE(Contains(script, "--container-image"));
  rapidjson::Document spec = JobSpecOf(work_dir);
  CHECK(Str(spec, "container_image").empty());
  CHECK_FALSE(spec.HasMember("docker_image"));
  REQUIRE(spec.HasMember("build_project"));
  CHECK_FALSE(spec["build_project"].GetBool());
  CHECK(spec["skip_install"].GetBool());
}

TEST_CASE(
    "lean scripts: the plan shows no image, and --skip-install false asks for the "
    "install step",
    "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_lean");
  CliRun plan =
      RunCli(LeanCli("plan", repo.path(), {"--partition", "cpu", "--custom-cmd", "echo hi"}));
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  CHECK(Contains(plan.stdout_text, "Docker image: (none)"));
  CHECK(Contains(plan.stdout_text + plan.stderr_text,
                 "container image: none (container_runtime none runs without a container)"));

  TempDir asked("trtllm_lean");
  CliRun install =
      RunCli(LeanCli("plan", asked.path(),
                     {"--partition", "cpu", "--skip-install", "false", "--custom-cmd", "echo hi"}));
  INFO(install.Describe());
  REQUIRE(install.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(asked.path());
  REQUIRE(!work_dir.empty());
  const std::string script = BatchScriptOf(work_dir);
  INFO(script);
  CHECK(Contains(script, "run_step install"));
  CHECK(Contains(script, "pip install -e ."));
  rapidjson::Document spec = JobSpecOf(work_dir);
  CHECK_FALSE(spec["skip_install"].GetBool());
  CHECK_FALSE(spec["build_project"].GetBool());  // local_slurm builds nothing
}

TEST_CASE("lean scripts: a pytest case with container_runtime none plans without an image",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_lean");
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_cpu.py", "def test_cpu():\n    assert True\n");
  CliRun plan = RunCli(LeanCli("plan", repo.path(),
                               {"--partition", "cpu", "--required-devices", "0", "--test-cmd",
                                "pytest -v tests/test_cpu.py"}));
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  CHECK(Contains(plan.stdout_text, "Docker image: (none)"));
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  const std::string script = BatchScriptOf(work_dir);
  CHECK(Contains(script, "run_step install"));  // pytest installs the repo by default
  rapidjson::Document spec = JobSpecOf(work_dir);
  CHECK_FALSE(spec["build_project"].GetBool());  // but nothing is built
}
