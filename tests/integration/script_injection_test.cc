// No byte of input becomes a new line of a job script: values from flags, request files
// and slurm_env.json with control characters are refused (exit 2, nothing written, nothing
// run); container images that docker or pyxis would read as options, and mount paths that
// pyxis or docker would split, are refused; a '%' in a work dir path reaches sbatch as
// "%%", so the job's output lands where trtllm-run follows it (a real job on the cluster).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

std::string FixtureText(const std::string& name) {
  return ReadTextFile(SourceDir() + "/tests/fixtures/" + name);
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

std::string Marker() { return "/tmp/trtllm_injected_" + std::to_string(::getpid()); }

}  // namespace

TEST_CASE("script injection: a newline in a partition from slurm_env.json is refused",
          "[cli][injection]") {
  TempDir repo("trtllm_inject");
  const std::string marker = Marker();
  // The partition name carries a newline and a command, as a hostile or broken file could.
  std::string env = ReplaceAll(FixtureText("slurm_env/cluster_a.json"), "\"batch\"",
                               "\"batch\\ntouch " + marker + "\"");
  const std::string env_file =
      repo.path() + "/../inject_env_" + std::to_string(::getpid()) + ".json";
  WriteTextFile(env_file, env);
  CliOptions options;
  options.args = {"plan",      "--scenario",          "local_slurm", "--repo-root",
                  repo.path(), "--slurm-env-file",    env_file,      "--custom-cmd",
                  "true",      "--container-runtime", "none",        "--container-image",
                  "none"};
  options.timeout_seconds = 30;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("holds a control character"));
  CHECK_THAT(run.stderr_text, Catch::Contains("batch\\ntouch"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
  CHECK_FALSE(fs::exists(marker));
  fs::remove(env_file);
}

TEST_CASE("script injection: images read as options and mounts that split are refused",
          "[cli][injection]") {
  TempDir repo("trtllm_inject");
  const std::string env_file = SourceDir() + "/tests/fixtures/slurm_env/cluster_a.json";
  auto plan = [&](std::vector<std::string> extra) {
    CliOptions options;
    options.args = {"plan", "--repo-root", repo.path(), "--custom-cmd", "true"};
    options.args.insert(options.args.end(), extra.begin(), extra.end());
    options.timeout_seconds = 30;
    return RunCli(options);
  };
  SECTION("docker: --container-image=--privileged") {
    CliRun run = plan({"--scenario", "local_docker", "--container-image=--privileged"});
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("starts with '-'"));
  }
  SECTION("pyxis: --container-image=--container-mounts=/:/host") {
    CliRun run = plan({"--scenario", "local_slurm", "--slurm-env-file", env_file,
                       "--container-image=--container-mounts=/:/host", "--models-path",
                       "/data/models", "--llm-models-root", "/llm-models"});
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("starts with '-'"));
  }
  SECTION("pyxis: a models path with ',' would add a mount") {
    CliRun run = plan({"--scenario", "local_slurm", "--slurm-env-file", env_file,
                       "--container-image", "nvcr.io/nvidia/pytorch:24.01-py3", "--models-path",
                       "/data/models,/:/host", "--llm-models-root", "/llm-models"});
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("holds ',' or ':'"));
  }
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("script injection: a '%' in the work dir path reaches sbatch escaped",
          "[slurm][injection]") {
  EnsureSlurm();
  // %x would be the job name and %u the user if sbatch saw them unescaped.
  TempDir parent("trtllm_pct");
  const std::string repo = parent.path() + "/repo%x%u";
  fs::create_directories(repo);
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_slurm",
                  "--repo-root",
                  repo,
                  "--partition",
                  "batch",
                  "--skip-install",
                  "true",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--custom-cmd",
                  "echo output-of-the-percent-job",
                  "--monitor-timeout",
                  "2m"};
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo);
  REQUIRE_FALSE(work_dir.empty());
  std::string script;
  for (const auto& entry : fs::directory_iterator(work_dir)) {
    if (entry.path().extension() == ".slurm") script = ReadTextFile(entry.path().string());
  }
  CHECK_THAT(script, Catch::Contains("repo%%x%%u/work_dirs/"));
  CHECK_THAT(run.stdout_text + run.stderr_text, Catch::Contains("output-of-the-percent-job"));
}
