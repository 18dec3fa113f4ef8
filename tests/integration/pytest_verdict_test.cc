// Real pytest (Debian's python3-pytest) on test trees of TensorRT-LLM's shape, through the
// trtllm-run binary on this host (local_direct) and on the real test cluster (local_slurm,
// container runtime none): the verdict follows what pytest reported, and integration test
// ids run from tests/integration/defs, where they resolve.
//
// The tree is written here: tests/integration/defs with its own pytest.ini and a
// conftest.py whose skip_less_device(N) marker skips a test when fewer than N GPUs are
// visible (CUDA_VISIBLE_DEVICES, which Slurm sets for the job's gres; unset: none), as
// TensorRT-LLM's conftest does; tests/unittest with gpu2 marks.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "result_schema.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

constexpr const char* kPytestIni = R"([pytest]
markers =
    skip_less_device(n): skip when fewer than n GPUs are visible
)";

constexpr const char* kConftest = R"(import os

import pytest


def visible_gpus():
    devices = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return len([d for d in devices.split(",") if d.strip()])


def pytest_collection_modifyitems(config, items):
    gpus = visible_gpus()
    for item in items:
        marker = item.get_closest_marker("skip_less_device")
        if marker and gpus < marker.args[0]:
            item.add_marker(pytest.mark.skip(
                reason=f"needs {marker.args[0]} GPUs, {gpus} visible"))
)";

constexpr const char* kAccuracyTests = R"(import os

import pytest


class TestTiny:
    def test_ok(self):
        # Runs from tests/integration/defs, as TensorRT-LLM's CI runs it.
        assert os.path.isfile("pytest.ini"), os.getcwd()

    @pytest.mark.skip_less_device(2)
    def test_two_gpus(self):
        pass

    def test_bad(self):
        assert 6 * 7 == 41, "the answer differs"

    @pytest.mark.xfail(reason="known issue")
    def test_xfail(self):
        assert False

    @pytest.mark.xfail(reason="fixed upstream")
    def test_xpass(self):
        pass

    @pytest.mark.parametrize("shape", ["4 x 8", "plain"])
    def test_param(self, shape):
        assert shape
)";

constexpr const char* kUnitTests = R"(import pytest


@pytest.mark.gpu2
def test_pair():
    pass
)";

constexpr const char* kUnitIni = R"([pytest]
markers =
    gpu2: needs two GPUs
)";

// A TensorRT-LLM-shaped checkout in a temp dir.
struct Tree {
  TempDir repo{"trtllm_pytest_tree"};
  Tree() {
    const std::string defs = repo.path() + "/tests/integration/defs";
    fs::create_directories(defs + "/accuracy");
    fs::create_directories(repo.path() + "/tests/unittest/llmapi");
    WriteTextFile(defs + "/pytest.ini", kPytestIni);
    WriteTextFile(defs + "/conftest.py", kConftest);
    WriteTextFile(defs + "/accuracy/test_tiny.py", kAccuracyTests);
    WriteTextFile(defs + "/accuracy/test_broken.py", "import module_that_does_not_exist\n");
    WriteTextFile(repo.path() + "/tests/unittest/pytest.ini", kUnitIni);
    WriteTextFile(repo.path() + "/tests/unittest/llmapi/test_pair.py", kUnitTests);
  }
  const std::string& path() const { return repo.path(); }
};

// The arguments of a run on `scenario` (local_direct, or local_slurm without a container).
std::vector<std::string> Args(const std::string& scenario, const Tree& tree,
                              std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",       "--scenario",        scenario, "--repo-root",
                                   tree.path(), "--monitor-timeout", "3m"};
  if (scenario == "local_slurm") {
    args.insert(args.end(), {"--partition", "batch", "--skip-install", "true",
                             "--container-runtime", "none", "--container-image", "none"});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

struct Outcome {
  CliRun run;
  std::string work_dir;
  rapidjson::Document result;
  std::string job_spec;
};

Outcome Run(const std::vector<std::string>& args, const std::string& repo) {
  Outcome out;
  CliOptions options;
  options.args = args;
  options.timeout_seconds = 240;
  // No GPU on this host: the conftest counts none unless Slurm sets the variable.
  options.unset_env = {"CUDA_VISIBLE_DEVICES"};
  out.run = RunCli(options);
  out.work_dir = FindSingleWorkDir(repo);
  if (!out.work_dir.empty()) {
    out.result = ReadResultJson(out.work_dir);
    out.job_spec = ReadTextFile(out.work_dir + "/job_spec.json");
  }
  return out;
}

std::string Status(const Outcome& o) {
  if (!o.result.IsObject() || !o.result.HasMember("status")) return "(no result.json)";
  return o.result["status"].GetString();
}

int Count(const Outcome& o, const char* key) {
  if (!o.result.IsObject() || !o.result.HasMember("tests") || !o.result["tests"].IsObject()) {
    return -1;
  }
  return o.result["tests"][key].GetInt();
}

std::string Reason(const Outcome& o) {
  return o.result.IsObject() && o.result.HasMember("reason") ? o.result["reason"].GetString() : "";
}

void EnsureFor(const std::string& scenario) {
  if (scenario == "local_slurm") EnsureSlurm();
}

void VerdictsOn(const std::string& scenario) {
  EnsureFor(scenario);
  SECTION("an id relative to tests/integration/defs runs there and PASSES") {
    Tree tree;
    Outcome o =
        Run(Args(scenario, tree, {"--test-cmd", "pytest accuracy/test_tiny.py::TestTiny::test_ok"}),
            tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 0);
    CHECK(Status(o) == "PASSED");
    CHECK(Count(o, "passed") == 1);
    CHECK_THAT(o.job_spec, Catch::Contains("\"working_dir\": \"tests/integration/defs\""));
    CHECK_THAT(o.run.stderr_text, Catch::Contains("working_dir tests/integration/defs"));
  }
  SECTION("every selected test skipped is SKIPPED (exit 8), with pytest's reason") {
    Tree tree;
    // One GPU asked for (Slurm then makes one visible): the marker wants two.
    Outcome o = Run(Args(scenario, tree,
                         {"--required-devices", "1", "--test-cmd",
                          "pytest -rs accuracy/test_tiny.py::TestTiny::test_two_gpus"}),
                    tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 8);
    CHECK(Status(o) == "SKIPPED");
    CHECK(Count(o, "skipped") == 1);
    CHECK(Count(o, "passed") == 0);
    CHECK_THAT(Reason(o), Catch::Contains("needs 2 GPUs"));
    std::vector<std::string> problems = ValidateResult(o.result, o.run.exit_code);
    CHECK(problems.empty());
  }
  SECTION("failures are FAILED with the counts, the failed test and per-test JUnit") {
    Tree tree;
    TempDir out("trtllm_pytest_junit");
    const std::string junit = out.path() + "/junit.xml";
    Outcome o = Run(Args(scenario, tree,
                         {"--required-devices", "1", "--junit", junit, "--test-cmd",
                          "pytest -v accuracy/test_tiny.py::TestTiny"}),
                    tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 1);
    CHECK(Status(o) == "FAILED");
    CHECK(Count(o, "failed") == 1);
    CHECK(Count(o, "passed") == 3);
    CHECK(Count(o, "skipped") == 1);
    CHECK(Count(o, "xfailed") == 1);
    CHECK(Count(o, "xpassed") == 1);
    CHECK_THAT(Reason(o), Catch::Contains("accuracy/test_tiny.py::TestTiny::test_bad"));
    CHECK_THAT(o.run.stderr_text, Catch::Contains("1 failed, 3 passed, 1 skipped"));
    REQUIRE(o.result.HasMember("test_cases"));
    CHECK(o.result["test_cases"].Size() == 7);
    std::string xml = ReadTextFile(junit);
    CHECK_THAT(xml, Catch::Contains("classname=\"accuracy.test_tiny.TestTiny\" name=\"test_bad\""));
    CHECK_THAT(xml, Catch::Contains("the answer differs"));
    CHECK_THAT(xml, Catch::Contains("name=\"test_param[4 x 8]\""));
    CHECK_THAT(xml, Catch::Contains("<skipped type=\"skipped\""));
    CHECK_THAT(xml, Catch::Contains("tests=\"7\" failures=\"1\""));
  }
  SECTION("xfail and xpass alone are PASSED") {
    Tree tree;
    Outcome o = Run(Args(scenario, tree,
                         {"--test-cmd",
                          "pytest accuracy/test_tiny.py::TestTiny::test_xfail "
                          "accuracy/test_tiny.py::TestTiny::test_xpass"}),
                    tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 0);
    CHECK(Status(o) == "PASSED");
    CHECK(Count(o, "xfailed") == 1);
    CHECK(Count(o, "xpassed") == 1);
  }
  SECTION("no tests collected is ERROR naming what was asked") {
    Tree tree;
    Outcome o =
        Run(Args(scenario, tree, {"--test-cmd", "pytest accuracy/test_tiny.py -k no_such_test"}),
            tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 3);
    CHECK(Status(o) == "ERROR");
    CHECK_THAT(Reason(o), Catch::Contains("no tests were collected"));
    CHECK_THAT(Reason(o), Catch::Contains("-k no_such_test"));
  }
  SECTION("a collection error is ERROR: pytest was interrupted") {
    Tree tree;
    Outcome o =
        Run(Args(scenario, tree, {"--test-cmd", "pytest accuracy/test_broken.py"}), tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 3);
    CHECK(Status(o) == "ERROR");
    CHECK_THAT(Reason(o), Catch::Contains("interrupted"));
    CHECK_THAT(Reason(o), Catch::Contains("error during collection"));
  }
  SECTION("a bare parametrized id with brackets and blanks runs as one pytest argument") {
    Tree tree;
    Outcome o = Run(
        Args(scenario, tree, {"--test-cmd", "accuracy/test_tiny.py::TestTiny::test_param[4 x 8]"}),
        tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 0);
    CHECK(Status(o) == "PASSED");
    CHECK(Count(o, "passed") == 1);
    CHECK_THAT(o.job_spec, Catch::Contains("\"working_dir\": \"tests/integration/defs\""));
  }
  SECTION("a unit test id resolves from the repo root and is sized from its gpu2 mark") {
    Tree tree;
    Outcome o = Run(Args(scenario, tree,
                         {"--test-cmd", "pytest tests/unittest/llmapi/test_pair.py::test_pair"}),
                    tree.path());
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 0);
    CHECK(Status(o) == "PASSED");
    CHECK_THAT(o.job_spec, Catch::Contains("\"working_dir\": \"\""));
    CHECK_THAT(o.job_spec, Catch::Contains("\"required_devices\": 2"));
  }
}

}  // namespace

TEST_CASE("pytest verdicts on this host (local_direct, real pytest)", "[cli][pytest]") {
  VerdictsOn("local_direct");
}

TEST_CASE("pytest verdicts on the test cluster (local_slurm, real pytest)", "[slurm][pytest]") {
  VerdictsOn("local_slurm");
}

TEST_CASE("test ids that resolve in different directories are refused", "[cli][pytest]") {
  Tree tree;
  Outcome o = Run(Args("local_direct", tree,
                       {"--test-cmd",
                        "pytest accuracy/test_tiny.py::TestTiny::test_ok "
                        "tests/unittest/llmapi/test_pair.py"}),
                  tree.path());
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 2);
  CHECK(o.work_dir.empty());
  CHECK_THAT(o.run.stderr_text, Catch::Contains("resolve in different directories"));
}

TEST_CASE(
    "a plain cases list of ids: SKIPPED in the table and JUnit, PASSED + SKIPPED exit 0 "
    "and --rerun-failed leaves the skipped case alone",
    "[cli][pytest][daily]") {
  Tree tree;
  TempDir out("trtllm_pytest_cases");
  const std::string cases = out.path() + "/cases.txt";
  WriteTextFile(cases,
                "accuracy/test_tiny.py::TestTiny::test_ok\n"
                "accuracy/test_tiny.py::TestTiny::test_two_gpus\n");
  CliOptions options;
  options.args = {"run",         "--cases",   cases,     "--scenario",          "local_direct",
                  "--repo-root", tree.path(), "--junit", out.path() + "/j.xml", "--monitor-timeout",
                  "2m"};
  options.unset_env = {"CUDA_VISIBLE_DEVICES"};
  options.timeout_seconds = 240;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  // As pytest with both tests in one command: skips beside passes are a pass.
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.stderr_text, Catch::Contains("SKIPPED"));
  CHECK_THAT(run.stderr_text, Catch::Contains("1 skipped"));
  CHECK_THAT(run.stderr_text, Catch::Contains("1 passed"));
  // The skipped case's line says SKIPPED only, never PASSED first.
  CHECK_THAT(run.stderr_text,
             !Catch::Contains("test_two_gpus PASSED") && !Catch::Contains("test_two_gpus: PASSED"));
  std::string xml = ReadTextFile(out.path() + "/j.xml");
  CHECK_THAT(xml, Catch::Contains("skipped=\"1\""));
  CHECK_THAT(xml, Catch::Contains("<skipped message="));

  std::string run_dir;
  for (const auto& entry : fs::directory_iterator(tree.path() + "/work_dirs")) {
    if (entry.path().filename().string().rfind("cases_", 0) == 0) run_dir = entry.path().string();
  }
  REQUIRE_FALSE(run_dir.empty());
  CliOptions rerun;
  rerun.args = {"run", "--rerun-failed", run_dir, "--repo-root", tree.path()};
  rerun.timeout_seconds = 120;
  CliRun again = RunCli(rerun);
  INFO(again.Describe());
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.stderr_text, Catch::Contains("PASSED or was SKIPPED; nothing to rerun"));
}

TEST_CASE("local_docker: an integration test id runs in tests/integration/defs",
          "[docker][pytest]") {
  int status = 0;
  std::string out = Shell("bash " + SourceDir() + "/tests/services/docker.sh ensure 2>&1", &status);
  INFO(out);
  REQUIRE(status == 0);
  Tree tree;
  TempDir home("trtllm_pytest_home");
  // The test image has no Python: a stand-in pytest that passes only when started where
  // the id resolves (and the relative path to itself works only from there).
  fs::create_directories(tree.path() + "/bin");
  WriteTextFile(tree.path() + "/bin/pytest",
                "#!/bin/sh\n"
                "if [ -f pytest.ini ] && [ -f \"${1%%::*}\" ]; then\n"
                "  echo \"$(pwd)\"; echo '============ 1 passed in 0.01s ============'; exit 0\n"
                "fi\n"
                "echo \"ERROR: file or directory not found: $1\"\n"
                "echo '============ no tests ran in 0.01s ============'; exit 4\n");
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_docker",
                  "--container-image",
                  "trtllm-run-test:busybox",
                  "--docker-pull",
                  "never",
                  "--build-project",
                  "false",
                  "--skip-install",
                  "true",
                  "--repo-root",
                  tree.path(),
                  "--test-cmd",
                  "sh ../../../bin/pytest accuracy/test_tiny.py::TestTiny::test_ok"};
  options.env = {{"HOME", home.path()}};
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.stdout_text, Catch::Contains(tree.path() + "/tests/integration/defs"));
  std::string work_dir = FindSingleWorkDir(tree.path());
  REQUIRE(!work_dir.empty());
  CHECK_THAT(ReadTextFile(work_dir + "/job_spec.json"),
             Catch::Contains("\"working_dir\": \"tests/integration/defs\""));
  CHECK_THAT(ReadTextFile(work_dir + "/docker_cmd.sh"),
             Catch::Contains("cd tests/integration/defs || exit 1"));
}
