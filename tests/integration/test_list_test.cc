// TensorRT-LLM's test lists run as its CI runs them, through the trtllm-run binary with
// real pytest and pytest-timeout (Debian's python3-pytest, python3-pytest-timeout) on this
// host (local_direct): the lines of a qa list, waives.txt and a test-db YAML, written here
// in the repo's shapes, in --cases and in --test-cmd; SKIP / XFAIL / UNSTABLE in
// result.json and JUnit; TIMEOUT (N) as the test's own pytest-timeout; `plan --cases`.
//
// The tree is TensorRT-LLM-shaped: tests/integration/defs (pytest.ini, conftest.py,
// accuracy/) and tests/unittest (its own pytest.ini with the gpuN marks).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

constexpr const char* kDefsIni = R"([pytest]
markers =
    skip_less_device(n): skip when fewer than n GPUs are visible
)";

// Each test that runs leaves a file named after itself in $RAN_DIR: a SKIP line must
// leave none.
constexpr const char* kAccuracy = R"(import os
import time

import pytest


def ran(name):
    open(os.path.join(os.environ["RAN_DIR"], name), "w").close()


class TestTiny:
    def test_ok(self):
        ran("test_ok")
        assert os.path.isfile("pytest.ini"), os.getcwd()

    def test_default_timeout(self):
        ran("test_default_timeout")
        # CI's --timeout=3600, given to pytest-timeout through its environment variable.
        assert os.environ.get("PYTEST_TIMEOUT") == "3600"

    def test_waived(self):
        ran("test_waived")

    def test_known_bug(self):
        ran("test_known_bug")
        assert 6 * 7 == 41, "the answer differs"

    def test_flaky(self):
        ran("test_flaky")

    # Its own pytest-timeout limit (2 s) is the one that fires: the list's TIMEOUT (1)
    # gives the command --timeout=60, which a test's own mark overrides.
    @pytest.mark.timeout(2)
    def test_hangs(self):
        ran("test_hangs")
        time.sleep(60)
)";

constexpr const char* kUnitIni = R"([pytest]
markers =
    gpu1: needs one GPU
    gpu2: needs two GPUs
)";

constexpr const char* kUnitMoe = R"(import os

import pytest


@pytest.mark.gpu1
@pytest.mark.parametrize("backend", ["CUTLASS", "TRTLLM", "DEEPGEMM"])
def test_moe(backend):
    # Runs from tests/, as test_unittests.py runs unit tests.
    assert os.path.isdir("unittest"), os.getcwd()
    open(os.path.join(os.environ["RAN_DIR"], "moe_" + backend), "w").close()


@pytest.mark.gpu2
def test_pair():
    open(os.path.join(os.environ["RAN_DIR"], "pair"), "w").close()
)";

struct Tree {
  TempDir repo{"trtllm_list_tree"};
  TempDir ran{"trtllm_list_ran"};
  Tree() {
    const std::string defs = repo.path() + "/tests/integration/defs";
    fs::create_directories(defs + "/accuracy");
    fs::create_directories(repo.path() + "/tests/unittest/_torch/modules");
    WriteTextFile(defs + "/pytest.ini", kDefsIni);
    WriteTextFile(defs + "/accuracy/test_tiny.py", kAccuracy);
    WriteTextFile(repo.path() + "/tests/unittest/pytest.ini", kUnitIni);
    WriteTextFile(repo.path() + "/tests/unittest/_torch/modules/test_moe.py", kUnitMoe);
  }
  const std::string& path() const { return repo.path(); }
  bool Ran(const std::string& name) const { return fs::exists(ran.path() + "/" + name); }
};

CliRun Cli(const Tree& tree, std::vector<std::string> args, double timeout = 240) {
  CliOptions options;
  options.args = std::move(args);
  options.env = {{"RAN_DIR", tree.ran.path()}};
  options.unset_env = {"CUDA_VISIBLE_DEVICES", "PYTEST_TIMEOUT", "PYTEST_ADDOPTS"};
  options.timeout_seconds = timeout;
  return RunCli(options);
}

std::string Str(const rapidjson::Value& value, const char* key) {
  return value.IsObject() && value.HasMember(key) && value[key].IsString() ? value[key].GetString()
                                                                           : "<missing>";
}

// The case of the combined result.json whose name starts with `name`.
const rapidjson::Value* FindCase(const rapidjson::Document& combined, const std::string& name) {
  if (!combined.IsObject() || !combined.HasMember("cases")) return nullptr;
  for (const auto& item : combined["cases"].GetArray()) {
    if (Str(item, "name").rfind(name, 0) == 0) return &item;
  }
  return nullptr;
}

std::string CombinedDir(const std::string& repo) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(repo + "/work_dirs", error)) {
    if (entry.path().filename().string().rfind("cases_", 0) == 0) return entry.path().string();
  }
  return "";
}

}  // namespace

TEST_CASE("test list: every line form of a qa list runs as CI runs it", "[cli][pytest][list]") {
  Tree tree;
  TempDir out("trtllm_list_out");
  const std::string list = out.path() + "/qa_list.txt";
  const std::string junit = out.path() + "/junit.xml";
  WriteTextFile(list,
                "# qa list shape: ids relative to tests/integration/defs, unittest/ from tests/\n"
                "accuracy/test_tiny.py::TestTiny::test_ok TIMEOUT (2) ISOLATION\n"
                "accuracy/test_tiny.py::TestTiny::test_default_timeout\n"
                "full:H100/accuracy/test_tiny.py::TestTiny::test_waived SKIP (https://nvbugs/1)\n"
                "accuracy/test_tiny.py::TestTiny::test_known_bug XFAIL (known bug 2)  # comment\n"
                "accuracy/test_tiny.py::TestTiny::test_flaky UNSTABLE (flaky on H100)\n"
                "unittest/_torch/modules/test_moe.py::test_moe -k \"CUTLASS or TRTLLM\"\n"
                "unittest/_torch/modules/test_moe.py -m \"gpu2\" TIMEOUT (3)\n");
  CliRun run =
      Cli(tree, {"run", "--cases", list, "--scenario", "local_direct", "--repo-root", tree.path(),
                 "--skip-install", "true", "--junit", junit, "--required-devices", "1"});
  INFO(run.Describe());
  // Every case PASSED, SKIPPED or FAILED under XFAIL: a pass (skips beside passes are a
  // pass, as in pytest), the XFAIL's failure is not counted.
  CHECK(run.exit_code == 0);
  rapidjson::Document combined = ReadResultJson(CombinedDir(tree.path()));
  REQUIRE(combined.IsObject());

  const rapidjson::Value* ok = FindCase(combined, "accuracy/test_tiny.py::TestTiny::test_ok");
  REQUIRE(ok != nullptr);
  CHECK(Str(*ok, "status") == "PASSED");
  CHECK(Str((*ok)["result"], "command") ==
        "pytest --timeout=120 "
        "accuracy/test_tiny.py::TestTiny::test_ok");
  CHECK(Str(*FindCase(combined, "accuracy/test_tiny.py::TestTiny::test_default_timeout"),
            "status") == "PASSED");

  const rapidjson::Value* waived =
      FindCase(combined, "accuracy/test_tiny.py::TestTiny::test_waived");
  REQUIRE(waived != nullptr);
  CHECK(Str(*waived, "status") == "SKIPPED");
  CHECK_THAT(Str((*waived)["result"], "reason"), Catch::Contains("https://nvbugs/1"));
  CHECK(Str((*waived)["result"]["details"], "list_marker") == "SKIP");
  CHECK_FALSE(tree.Ran("test_waived"));

  const rapidjson::Value* known =
      FindCase(combined, "accuracy/test_tiny.py::TestTiny::test_known_bug");
  REQUIRE(known != nullptr);
  CHECK(Str(*known, "status") == "FAILED");
  CHECK(tree.Ran("test_known_bug"));
  CHECK(Str((*known)["result"]["details"], "list_marker") == "XFAIL");
  CHECK(Str((*known)["result"]["details"], "list_marker_reason") == "known bug 2");

  const rapidjson::Value* flaky = FindCase(combined, "accuracy/test_tiny.py::TestTiny::test_flaky");
  REQUIRE(flaky != nullptr);
  CHECK(Str(*flaky, "status") == "PASSED");
  CHECK(Str((*flaky)["result"]["details"], "list_marker") == "UNSTABLE");

  // -k selects two of the three parameters; run from tests/.
  const rapidjson::Value* moe =
      FindCase(combined, "unittest/_torch/modules/test_moe.py::test_moe -k");
  REQUIRE(moe != nullptr);
  CHECK(Str(*moe, "status") == "PASSED");
  CHECK(tree.Ran("moe_CUTLASS"));
  CHECK(tree.Ran("moe_TRTLLM"));
  CHECK_FALSE(tree.Ran("moe_DEEPGEMM"));
  CHECK((*moe)["result"]["tests"]["passed"].GetInt() == 2);
  // -m "gpu2" selects the gpu2 test only.
  const rapidjson::Value* pair = FindCase(combined, "unittest/_torch/modules/test_moe.py -m");
  REQUIRE(pair != nullptr);
  CHECK(Str(*pair, "status") == "PASSED");
  CHECK(tree.Ran("pair"));

  CHECK_THAT(run.stderr_text, Catch::Contains("FAILED (XFAIL)") &&
                                  Catch::Contains("PASSED (UNSTABLE)") &&
                                  Catch::Contains("SKIPPED (SKIP)"));
  const std::string xml = ReadTextFile(junit);
  CHECK_THAT(xml, Catch::Contains("<skipped type=\"SKIP\" message=\"SKIP in the test list "
                                  "(https://nvbugs/1)"));
  CHECK_THAT(xml, Catch::Contains("<skipped type=\"XFAIL\" message=\"XFAIL in the test list"));
  CHECK_THAT(xml, Catch::Contains("name=\"list_marker\" value=\"UNSTABLE\""));
  CHECK_THAT(xml, Catch::Contains("failures=\"0\""));
}

TEST_CASE("test list: TIMEOUT (N) is the test's own pytest-timeout, its expiry is TIMEOUT",
          "[cli][pytest][list][timeout]") {
  Tree tree;
  CliRun run =
      Cli(tree, {"run", "--scenario", "local_direct", "--repo-root", tree.path(), "--skip-install",
                 "true", "--test-cmd", "accuracy/test_tiny.py::TestTiny::test_hangs TIMEOUT (1)"});
  INFO(run.Describe());
  CHECK(run.exit_code == 4);
  CHECK(run.seconds < 50);  // pytest-timeout's 2 s, not the job's limit
  const std::string work_dir = FindSingleWorkDir(tree.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  CHECK(Str(result, "status") == "TIMEOUT");
  CHECK_THAT(
      Str(result, "reason"),
      Catch::Contains("pytest-timeout stopped accuracy/test_tiny.py::TestTiny::test_hangs") &&
          Catch::Contains("Timeout >2.0s"));
  CHECK(Str(result, "command") ==
        "pytest --timeout=60 accuracy/test_tiny.py::TestTiny::test_hangs");
  // The diagnosis speaks of the test's limit, not the job's --monitor-timeout.
  CHECK_THAT(Str(result, "diagnosis"), Catch::Contains("its own pytest-timeout limit"));
  CHECK_THAT(Str(result, "diagnosis"), !Catch::Contains("--monitor-timeout"));
  const std::string spec = ReadTextFile(work_dir + "/job_spec.json");
  // The job's limit: the test's 60 s + a 300 s margin (no install step).
  CHECK_THAT(spec, Catch::Contains("\"monitor_timeout_seconds\": 360"));
  CHECK_THAT(spec, Catch::Contains("\"working_dir\": \"tests/integration/defs\""));
}

TEST_CASE("test list: --test-cmd takes the same grammar", "[cli][pytest][list]") {
  Tree tree;
  SECTION("SKIP is SKIPPED with its reason, and nothing runs") {
    CliRun run = Cli(
        tree, {"run", "--scenario", "local_direct", "--repo-root", tree.path(), "--skip-install",
               "true", "--test-cmd", "accuracy/test_tiny.py::TestTiny::test_waived SKIP (bug 7)"});
    INFO(run.Describe());
    CHECK(run.exit_code == 8);
    rapidjson::Document result = ReadResultJson(FindSingleWorkDir(tree.path()));
    CHECK(Str(result, "status") == "SKIPPED");
    CHECK_THAT(Str(result, "reason"), Catch::Contains("bug 7"));
    CHECK_FALSE(tree.Ran("test_waived"));
  }
  SECTION("-k with TIMEOUT and ISOLATION runs in tests/integration/defs") {
    CliRun run = Cli(
        tree, {"run", "--scenario", "local_direct", "--repo-root", tree.path(), "--skip-install",
               "true", "--test-cmd",
               "accuracy/test_tiny.py::TestTiny -k \"ok and not bug\" TIMEOUT (120) ISOLATION"});
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CHECK(tree.Ran("test_ok"));
    CHECK_FALSE(tree.Ran("test_known_bug"));
    CHECK_THAT(run.stderr_text, Catch::Contains("ISOLATION"));
  }
  SECTION("a unittest line with -m gpuN is sized from the mark and runs from tests/") {
    CliRun run = Cli(tree, {"plan", "--scenario", "local_direct", "--repo-root", tree.path(),
                            "--test-cmd", "unittest/_torch/modules/test_moe.py -m \"gpu2\""});
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.stdout_text, Catch::Contains("Devices: 2 GPUs") &&
                                    Catch::Contains("working_dir tests:") &&
                                    Catch::Contains("Model: moe"));
  }
  SECTION("a bad marker is refused, naming the line") {
    CliRun run = Cli(tree, {"plan", "--scenario", "local_direct", "--repo-root", tree.path(),
                            "--test-cmd", "accuracy/test_tiny.py::TestTiny::test_ok TIMEOUT (1h)"});
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("whole number of minutes"));
    CHECK_FALSE(fs::exists(tree.path() + "/work_dirs"));
  }
}

namespace {

constexpr const char* kTestDb = R"(version: 0.0.1
l0_fake_h100:
- condition:
    ranges:
      system_gpu_count:
        gte: 1
        lte: 1
    terms:
      stage: pre_merge
      backend: pytorch
  tests:
  - accuracy/test_tiny.py::TestTiny::test_ok
  - unittest/_torch/modules/test_moe.py::test_moe -k "CUTLASS"
  - accuracy/test_tiny.py::TestTiny::test_function_not_there_with_a_really_long_name_to_shorten[p-q-r] TIMEOUT (90)
- condition:
    ranges:
      system_gpu_count:
        gte: 2
        lte: 2
    terms:
      stage: post_merge
  tests:
  - unittest/_torch/modules/test_moe.py -m "gpu2"
  - accuracy/test_tiny.py::TestTiny::test_waived SKIP (waived here)
)";

}  // namespace

TEST_CASE("plan --cases of a test-db YAML shows what a single plan shows",
          "[cli][pytest][list][plan]") {
  Tree tree;
  TempDir out("trtllm_list_db");
  const std::string db = out.path() + "/l0_fake_h100.yml";
  WriteTextFile(db, kTestDb);
  CliOptions options;
  options.args = {"plan", "--cases", db, "--scenario", "local_direct", "--repo-root", tree.path()};
  options.env = {{"COLUMNS", "100"}};
  CliRun plan = RunCli(options);
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  const std::string& text = plan.stdout_text;
  CHECK_THAT(text, Catch::Contains("timeout") && Catch::Contains("5 cases planned") &&
                       Catch::Contains("1 warnings (cases marked !)"));
  // The table fits 100 columns: the long id is shortened in it, whole in the notes.
  std::size_t start = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos;
       start = end + 1, end = text.find('\n', start)) {
    const std::string line = text.substr(start, end - start);
    if (line.rfind("Case ", 0) == 0 || line.rfind("  - ", 0) == 0) break;  // the notes
    CHECK(line.size() <= 100);
  }
  CHECK_THAT(text, Catch::Contains("..."));
  CHECK_THAT(text, Catch::Contains("3!"));
  CHECK_THAT(text, Catch::Contains("warning: test function "
                                   "test_function_not_there_with_a_really_long_name_to_shorten"));
  CHECK_THAT(text, Catch::Contains("read from test-db block l0_fake_h100[2]") &&
                       Catch::Contains("stage=post_merge"));
  CHECK_THAT(text, Catch::Contains("SKIP (waived here): the test is not run"));
  // TIMEOUT (90): the job's limit is 90 min + 30 min for the install step + 5 min.
  CHECK_THAT(text, Catch::Contains("2h5m"));
  CHECK_FALSE(fs::exists(tree.path() + "/work_dirs"));

  options.args.push_back("--json");
  CliRun json = RunCli(options);
  INFO(json.Describe());
  REQUIRE(json.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(json.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(Str(doc, "kind") == "cases_plan");
  REQUIRE(doc["cases"].Size() == 5);
  const rapidjson::Value& third = doc["cases"][2];
  CHECK(Str(third, "name") ==
        "accuracy/test_tiny.py::TestTiny::test_function_not_there_with_a_really_long_name_to_"
        "shorten[p-q-r]");
  CHECK(third["warnings"].Size() == 1);
  CHECK(Str(third, "command") ==
        "pytest --timeout=5400 "
        "'accuracy/test_tiny.py::TestTiny::test_function_not_there_with_a_really_long_name_to_"
        "shorten[p-q-r]'");
  CHECK(Str(doc["cases"][3], "working_dir") == "tests");
  CHECK(doc["cases"][3]["total_required_devices"].GetInt() == 2);
  CHECK_THAT(json.stderr_text, Catch::Contains("5 cases planned"));
}
