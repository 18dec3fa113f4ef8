// The exit-code contract for bad input, on the real binary: exit 2, a message naming what
// is wrong and how to fix it (control bytes escaped), nothing created — no work dir and no
// empty work_dirs/ — whatever the input.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

struct BadRun {
  TempDir repo{"trtllm_bad_input"};
  CliRun run;

  // `trtllm-run <subcommand> --scenario local_direct --repo-root REPO <args>`.
  void Go(const std::string& subcommand, std::vector<std::string> args) {
    CliOptions options;
    options.args = {subcommand, "--scenario", "local_direct", "--repo-root", repo.path()};
    options.args.insert(options.args.end(), args.begin(), args.end());
    options.timeout_seconds = 30;
    run = RunCli(options);
  }
  void ExpectRefused(const std::string& message) const {
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains(message));
    CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
  }
};

}  // namespace

TEST_CASE("bad input: every kind is exit 2 with nothing created", "[cli][bad_input]") {
  BadRun bad;
  SECTION("a missing --request file") {
    bad.Go("run", {"--request", bad.repo.path() + "/no_such_request.yaml"});
    bad.ExpectRefused("--request: cannot read");
  }
  SECTION("a --request that is a directory") {
    bad.Go("plan", {"--request", bad.repo.path()});
    bad.ExpectRefused("Is a directory");
  }
  SECTION("a 300-character --model-name") {
    bad.Go("run", {"--custom-cmd", "true", "--model-name", std::string(300, 'm')});
    bad.ExpectRefused("model_name is 300 characters; the limit is 100");
  }
  SECTION("an ssh destination that starts with '-'") {
    bad.Go("plan", {"--custom-cmd", "true", "--ssh-host", "-oProxyCommand=touch /tmp/x"});
    bad.ExpectRefused("starts with '-'");
  }
  SECTION("a command too long for one process argument") {
    const std::string request = bad.repo.path() + "/../long_request.json";
    WriteTextFile(request, "{\"custom_cmd\": \"echo " + std::string(150000, 'x') + "\"}");
    bad.Go("run", {"--request", request});
    bad.ExpectRefused("the limit is 100000");
    CHECK_THAT(bad.run.stderr_text, Catch::Contains("--custom-script"));
    fs::remove(request);
  }
  SECTION("an unwritable --junit path is refused before the case runs") {
    const std::string marker = bad.repo.path() + "/../junit_case_ran_" + std::to_string(::getpid());
    for (const std::string& junit : {std::string("/nonexistent_dir/j.xml"), bad.repo.path(),
                                     std::string("/etc/passwd/j.xml")}) {
      INFO(junit);
      bad.Go("run", {"--custom-cmd", "touch " + marker, "--junit", junit});
      bad.ExpectRefused("--junit");
      CHECK_FALSE(fs::exists(marker));
    }
    fs::remove(marker);
  }
  SECTION("a NUL byte in a command from a request file") {
    const std::string request = bad.repo.path() + "/../nul_request.json";
    WriteTextFile(request, "{\"custom_cmd\": \"echo safe\\u0000; touch /tmp/cut\"}");
    bad.Go("run", {"--request", request});
    bad.ExpectRefused("custom_cmd holds a NUL byte");
    fs::remove(request);
  }
  SECTION("invalid UTF-8 in a command") {
    bad.Go("plan", {"--custom-cmd", "echo \xff\xfe"});
    bad.ExpectRefused("custom_cmd is not valid UTF-8 (byte 5: \\xFF)");
  }
  SECTION("control characters in a value rendered into scripts, shown escaped") {
    bad.Go("plan", {"--custom-cmd", "true", "--partition", "batch\n#SBATCH --x\x1b[31m"});
    bad.ExpectRefused("partition 'batch\\n#SBATCH --x\\x1B[31m' holds a control character");
    CHECK(bad.run.stderr_text.find('\x1b') == std::string::npos);
  }
  SECTION("an unreadable cluster catalog") {
    bad.Go("plan", {"--custom-cmd", "true", "--clusters", bad.repo.path()});
    bad.ExpectRefused("cluster catalog: cannot read");
  }
}
