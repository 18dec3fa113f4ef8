// `trtllm-run stage`: a fixture checkout in TensorRT-LLM's shapes (test-db YAML, waives.txt,
// .test_durations, tests in tests/integration/defs) planned, sharded, run, rerun and
// merged by the real binary with real pytest.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

// A checkout whose test-db context l0_stage_cli renders 8 tests for stage=pre_merge (one of
// them waived), with durations that split them into 3 shards.
void MakeCheckout(const std::string& repo) {
  fs::create_directories(repo + "/tests/integration/defs");
  fs::create_directories(repo + "/tests/integration/test_lists/test-db");
  fs::copy_file(SourceDir() + "/tests/fixtures/stage_run/defs/test_stage_shapes.py",
                repo + "/tests/integration/defs/test_stage_shapes.py");
  WriteTextFile(repo + "/tests/integration/test_lists/test-db/l0_stage_cli.yml",
                "version: 0.0.1\n"
                "l0_stage_cli:\n"
                "- condition:\n"
                "    terms:\n"
                "      stage: pre_merge\n"
                "  tests:\n"
                "  - test_stage_shapes.py::test_pass_a\n"
                "  - test_stage_shapes.py::test_pass_b\n"
                "  - test_stage_shapes.py::test_fail_always\n"
                "  - test_stage_shapes.py::test_skip\n"
                "  - test_stage_shapes.py::test_flaky\n"
                "  - test_stage_shapes.py::test_flaky_twice\n"
                "  - test_stage_shapes.py::TestIsolated::test_iso[small] ISOLATION\n"
                "  - test_stage_shapes.py::test_waived\n"
                "- condition:\n"
                "    terms:\n"
                "      stage: post_merge\n"
                "  tests:\n"
                "  - test_stage_shapes.py::test_crash\n");
  WriteTextFile(repo + "/tests/integration/test_lists/waives.txt",
                "test_stage_shapes.py::test_waived SKIP (https://nvbugs/5555)\n");
  WriteTextFile(repo + "/tests/integration/defs/.test_durations",
                "{\"test_stage_shapes.py::test_pass_a\": 3, \"test_stage_shapes.py::test_pass_b\": "
                "3, \"test_stage_shapes.py::test_fail_always\": 3}\n");
}

std::string Str(const rapidjson::Value& object, const char* key) {
  return object.HasMember(key) && object[key].IsString() ? object[key].GetString() : "";
}

// The checks that hold wherever the stage ran.
void CheckCliStage(const CliRun& run, const std::string& junit) {
  INFO(run.Describe());
  CHECK(run.exit_code == 1);  // test_fail_always failed on every rerun
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  REQUIRE(doc.IsObject());
  CHECK(Str(doc, "status") == "FAILED");
  CHECK(doc["split_count"].GetInt() == 3);
  CHECK(doc["counts"]["total"].GetInt() == 8);
  CHECK(doc["counts"]["passed"].GetInt() == 5);
  CHECK(doc["counts"]["flaky"].GetInt() == 2);
  CHECK(doc["counts"]["failed"].GetInt() == 1);
  CHECK(doc["counts"]["skipped"].GetInt() == 1);
  CHECK(doc["counts"]["waived"].GetInt() == 1);
  std::map<std::string, int> shards_of_round;
  for (const auto& shard : doc["shard_runs"].GetArray()) {
    ++shards_of_round[std::to_string(shard["round"].GetInt())];
  }
  CHECK(shards_of_round["0"] == 3);
  std::map<std::string, int> reruns;
  for (const auto& test : doc["tests"].GetArray())
    reruns[Str(test, "id")] = test["reruns"].GetInt();
  CHECK(reruns["test_stage_shapes.py::test_fail_always"] == 2);
  CHECK(reruns["test_stage_shapes.py::test_flaky"] == 1);
  CHECK(reruns["test_stage_shapes.py::test_flaky_twice"] == 2);
  CHECK(reruns["test_stage_shapes.py::test_pass_a"] == 0);
  CHECK(reruns.count("test_stage_shapes.py::test_crash") == 0);  // post_merge: not rendered

  std::string xml = ReadTextFile(junit);
  CHECK(xml.find("<testsuite name=\"Fixture-CLI\"") != std::string::npos);
  std::size_t cases = 0;
  for (std::size_t at = xml.find("<testcase "); at != std::string::npos;
       at = xml.find("<testcase ", at + 1)) {
    ++cases;
  }
  CHECK(cases == 8);
  CHECK(xml.find("<flakyFailure") != std::string::npos);
  CHECK(xml.find("waived: https://nvbugs/5555") != std::string::npos);
}

std::vector<std::string> StageArgs(const std::string& repo, const std::string& junit) {
  return {"stage",           "Fixture-CLI",      "--test-db", "l0_stage_cli", "--match",
          "stage=pre_merge", "--splits",         "3",         "--repo-root",  repo,
          "--python",        "/usr/bin/python3", "--junit",   junit,          "--json"};
}

}  // namespace

TEST_CASE("stage CLI: a test-db context in 3 splits on local_direct, merged and rerun",
          "[stage][cli]") {
  TempDir repo("trtllm_stage_cli");
  MakeCheckout(repo.path());
  const std::string junit = repo.path() + "/stage.xml";
  CliOptions options;
  options.args = StageArgs(repo.path(), junit);
  const std::string store = repo.path() + "/history.sqlite";
  options.args.insert(options.args.end(), {"--scenario", "local_direct", "--history", store});
  options.timeout_seconds = 240;
  CliRun run = RunCli(options);
  CheckCliStage(run, junit);

  // The history has every shard job and test attempt: `history flaky` names the two tests
  // that passed on a rerun, and their durations split the next plan.
  CliRun flaky = RunCli({"history", "flaky", "--history", store, "--json"});
  INFO(flaky.Describe());
  REQUIRE(flaky.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(flaky.stdout_text.c_str());
  REQUIRE(doc.IsObject());
  std::set<std::string> flaky_ids;
  for (const auto& test : doc["flaky"].GetArray()) flaky_ids.insert(Str(test, "node_id"));
  CHECK(flaky_ids == std::set<std::string>{"test_stage_shapes.py::test_flaky",
                                           "test_stage_shapes.py::test_flaky_twice"});
  CliRun failing =
      RunCli({"history", "test_stage_shapes.py::test_fail_always", "--history", store, "--json"});
  INFO(failing.Describe());
  REQUIRE(failing.exit_code == 0);
  doc.Parse(failing.stdout_text.c_str());
  REQUIRE(doc.IsObject());
  CHECK(doc["runs"].GetInt() == 3);  // the first run and 2 reruns
  CHECK(doc["failed"].GetInt() == 3);
  CHECK(Str(doc["last"][0], "stage") == "Fixture-CLI");
  const std::string durations = repo.path() + "/durations.json";
  REQUIRE(RunCli({"history", "export-durations", durations, "--history", store}).exit_code == 0);
  doc.Parse(ReadTextFile(durations).c_str());
  REQUIRE(doc.IsObject());
  CHECK(doc.HasMember("test_stage_shapes.py::test_pass_a"));
  CHECK_FALSE(doc.HasMember("test_stage_shapes.py::test_waived"));  // never ran
}

TEST_CASE("stage CLI: an empty render is exit 2 and nothing runs", "[stage][cli]") {
  TempDir repo("trtllm_stage_cli");
  MakeCheckout(repo.path());
  CliOptions options;
  options.args = {"stage",      "Fixture-CLI",         "--test-db",   "l0_stage_cli",
                  "--match",    "stage=no_such_stage", "--repo-root", repo.path(),
                  "--scenario", "local_direct"};
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("no_such_stage") != std::string::npos);  // names the keys
  CHECK(!fs::exists(repo.path() + "/work_dirs"));
  // A command flag would be silently replaced by the stage's jobs: refused.
  options.args = {"stage",        "Fixture-CLI",     "--test-db",   "l0_stage_cli",
                  "--match",      "stage=pre_merge", "--repo-root", repo.path(),
                  "--custom-cmd", "echo hi",         "--scenario",  "local_direct"};
  CliRun command = RunCli(options);
  INFO(command.Describe());
  CHECK(command.exit_code == 2);
  CHECK(command.stderr_text.find("--custom-cmd") != std::string::npos);
  CHECK(!fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("stage CLI: the same stage on the test Slurm cluster", "[stage][slurm]") {
  EnsureSlurm();
  TempDir repo("trtllm_stage_cli_slurm");
  MakeCheckout(repo.path());
  const std::string junit = repo.path() + "/stage.xml";
  CliOptions options;
  options.args = StageArgs(repo.path(), junit);
  options.args.insert(options.args.end(),
                      {"--scenario", "local_slurm", "--partition", "batch", "--skip-install",
                       "true", "--container-runtime", "none", "--container-image", "none"});
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  CheckCliStage(run, junit);
}
