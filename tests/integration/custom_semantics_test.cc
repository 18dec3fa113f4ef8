// A custom command ends at its first failing command, with that command's exit code, as the
// original run script (slurm_run_custom.sh: set -E and an ERR trap that exits, nounset,
// pipefail) ends it; the same on local_direct, local_slurm (the real test cluster) and
// local_docker (the real engine); on Slurm closing with the run script's
// "Rank<N> Custom command finished with exit code <N>" line, as the original prints it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace trtllm_run_test {
namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  if (!doc.IsObject() || !doc.HasMember(key) || !doc[key].IsString()) return "<missing>";
  return doc[key].GetString();
}

// What a custom command must give on every executor.
struct Expected {
  std::string command;
  std::string status;  // result.json status
  int exit_code;       // the command's (and trtllm-run's for PASSED/FAILED: 0/1)
  // What a later command would print (the command text has $((1+1)), not its value).
  std::string must_not_print;
  std::string error_text;  // on stderr/in the log when it fails; empty: none
};

// A pytest file with one failing test, for `pytest x; echo done`.
void WriteFailingPytest(const std::string& repo) {
  WriteTextFile(repo + "/test_fails.py", "def test_fails():\n    assert 1 == 2\n");
}

std::vector<Expected> Cases(bool with_pytest) {
  std::vector<Expected> cases = {
      {"false; true", "FAILED", 1, "", "error at line 1: false (exit code 1)"},
      {"true; (exit 3); echo no_such_$((1+1))_line", "FAILED", 3, "no_such_2_line",
       "(exit code 3)"},
      {"echo \"x=$TRTLLM_RUN_SURELY_UNSET\"; echo no_such_$((1+1))_line", "FAILED", 127,
       "no_such_2_line", "TRTLLM_RUN_SURELY_UNSET: unbound variable"},
      {"false | cat; echo no_such_$((1+1))_line", "FAILED", 1, "no_such_2_line", "(exit code 1)"},
      {"if false; then echo x; fi; false || echo recovered; echo done_ok", "PASSED", 0, "", ""},
  };
  if (with_pytest) {
    cases.push_back(
        {"pytest -q -p no:cacheprovider test_fails.py; "
         "echo no_such_$((1+1))_line",
         "FAILED", 1, "no_such_2_line", "1 failed"});
  }
  return cases;
}

// Runs every case through `trtllm-run run --scenario <args...> --custom-cmd CMD` and checks
// the verdict, the exit code in the Rank line and that nothing after the failure ran.
void CheckEveryCase(const std::vector<std::string>& scenario_args, bool with_pytest,
                    double timeout_seconds, bool rank_line) {
  for (const Expected& want : Cases(with_pytest)) {
    TempDir repo("trtllm_custom_sem");
    TempDir home("trtllm_custom_home");  // bind-mounted by local_docker
    if (with_pytest) WriteFailingPytest(repo.path());
    CliOptions options;
    options.args = {"run", "--repo-root", repo.path()};
    options.args.insert(options.args.end(), scenario_args.begin(), scenario_args.end());
    options.args.insert(options.args.end(), {"--custom-cmd", want.command});
    options.unset_env = {"TRTLLM_RUN_SURELY_UNSET"};
    options.cwd = repo.path();
    options.env = {{"HOME", home.path()}};
    options.timeout_seconds = timeout_seconds;
    CliRun run = RunCli(options);
    INFO("command: " << want.command << "\n" << run.Describe());
    std::string work_dir = FindSingleWorkDir(repo.path());
    REQUIRE_FALSE(work_dir.empty());
    rapidjson::Document result = ReadResultJson(work_dir);
    REQUIRE(result.IsObject());
    std::string log = ReadTextFile(Str(result, "log_file"));
    INFO("log:\n" << log);
    CHECK(Str(result, "status") == want.status);
    CHECK(run.exit_code == (want.status == "PASSED" ? 0 : 1));
    std::string everything = log + run.stdout_text + run.stderr_text;
    // The command's own exit code: the Slurm run script's Rank line, else result.json's.
    if (rank_line) {
      CHECK_THAT(everything, Catch::Contains("Custom command finished with exit code " +
                                             std::to_string(want.exit_code)));
    } else {
      REQUIRE(result.HasMember("exit_code"));
      CHECK(result["exit_code"].GetInt() == want.exit_code);
    }
    if (!want.must_not_print.empty()) {
      CHECK(everything.find(want.must_not_print) == std::string::npos);
    }
    if (!want.error_text.empty()) CHECK_THAT(everything, Catch::Contains(want.error_text));
  }
}

}  // namespace

TEST_CASE("custom command semantics: local_direct ends at the first failing command",
          "[local_direct][cli][custom]") {
  CheckEveryCase({"--scenario", "local_direct"}, /*with_pytest=*/true, 120, /*rank_line=*/false);
}

TEST_CASE("custom command semantics: local_slurm ends at the first failing command",
          "[slurm][cli][custom]") {
  EnsureSlurm();
  CheckEveryCase({"--scenario", "local_slurm", "--partition", "batch", "--skip-install", "true",
                  "--container-runtime", "none", "--container-image", "none"},
                 /*with_pytest=*/true, 240, /*rank_line=*/true);
}

TEST_CASE("custom command semantics: local_docker ends at the first failing command",
          "[docker][cli][custom]") {
  EnsureService("docker");
  // The test image has bash but no Python: no pytest case.
  CheckEveryCase({"--scenario", "local_docker", "--container-image", "trtllm-run-test:busybox",
                  "--docker-pull", "never", "--build-project", "false", "--skip-install", "true"},
                 /*with_pytest=*/false, 180, /*rank_line=*/false);
}

}  // namespace trtllm_run_test
