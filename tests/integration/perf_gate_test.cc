// The perf gate through the real CLI (docs/perf.md): a stand-in trtllm-bench prints
// trtllm-bench's PERFORMANCE OVERVIEW with a throughput the test sets per run; the history
// store gives the baseline. On local_direct under strace (no inet connection may be made
// by a gated run), and on the Slurm test cluster: 10 good runs, then run 11 drops 15 %:
// FAILED / perf_regression, and PASSED with --perf-gate warn. Also `perf compare`.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace trtllm_run_test {
namespace {

std::string StrOf(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

// A directory holding a stand-in `trtllm-bench` that prints the report of trtllm-bench
// (with colours and rank noise) and the throughput in <dir>/throughput.
struct StandInBench {
  TempDir dir{"trtllm_perf_bench"};
  StandInBench() {
    WriteTextFile(dir.path() + "/trtllm-bench",
                  "#!/bin/bash\n"
                  "tput=$(cat \"$(dirname \"$0\")/throughput\")\n"
                  "echo '[TensorRT-LLM][INFO] Engine loaded: rank 0: 1.2 GiB'\n"
                  "printf 'Processed 50%%\\rProcessed 100%%\\r\\n'\n"
                  "echo '==========================================================='\n"
                  "echo '= PERFORMANCE OVERVIEW'\n"
                  "echo '==========================================================='\n"
                  "echo 'Request Throughput (req/sec):                     43.2089'\n"
                  "printf '\\033[32mTotal Output Throughput (tokens/sec):\\033[0m    %s\\n' "
                  "\"$tput\"\n"
                  "echo \"Total Token Throughput (tokens/sec):              $tput\"\n"
                  "echo 'Average time-to-first-token [TTFT] (ms):          52667.0339'\n"
                  "echo '[TTFT] P99    : 106563.4497'\n");
    ::chmod((dir.path() + "/trtllm-bench").c_str(), 0755);
    SetThroughput("1000.0");
  }
  void SetThroughput(const std::string& value) {
    WriteTextFile(dir.path() + "/throughput", value + "\n");
  }
  std::string Path() const { return dir.path() + ":" + std::string(::getenv("PATH")); }
};

const char kBenchCmd[] = "trtllm-bench --model /m/Llama-3.1-8B throughput --concurrency 8";

struct GatedRun {
  CliRun run;
  rapidjson::Document result;
};

GatedRun RunGated(CliOptions options) {
  GatedRun out;
  out.run = RunCli(options);
  out.result.Parse(out.run.stdout_text.c_str());
  return out;
}

const rapidjson::Value* GateRow(const rapidjson::Document& result, const std::string& metric) {
  if (!result.IsObject() || !result.HasMember("perf") || !result["perf"].HasMember("gate")) {
    return nullptr;
  }
  for (const rapidjson::Value& row : result["perf"]["gate"]["rows"].GetArray()) {
    if (metric == row["metric"].GetString()) return &row;
  }
  return nullptr;
}

TEST_CASE("perf gate on local_direct: metrics read, 15 % drop FAILED, no inet connection",
          "[cli][perf]") {
  TempDir repo("trtllm_perf_repo");
  TempDir state("trtllm_perf_state");
  StandInBench bench;
  const std::string store = state.path() + "/history.sqlite";
  auto options_for = [&](const std::string& gate) {
    CliOptions options;
    options.args = {"run",     "--scenario",  "local_direct", "--bench-cmd",
                    kBenchCmd, "--repo-root", repo.path(),    "--skip-install",
                    "true",    "--history",   store,          "--perf-gate",
                    gate,      "--json"};
    options.env = {{"PATH", bench.Path()}};
    return options;
  };
  // Three good runs (the first has no baseline: not gated).
  for (int i = 0; i < 3; ++i) {
    GatedRun good = RunGated(options_for("post-merge"));
    INFO(good.run.Describe());
    REQUIRE(good.run.exit_code == 0);
    REQUIRE(good.result.IsObject());
    const rapidjson::Value& metrics = good.result["perf"]["metrics"];
    REQUIRE(metrics.Size() == 5);
    CHECK(StrOf(metrics[1], "name") == "token_throughput");
    CHECK(metrics[1]["value"].GetDouble() == 1000.0);
    CHECK(metrics[3]["value"].GetDouble() == 52667.0339);
    CHECK(StrOf(metrics[4], "name") == "p99_ttft");
    CHECK(StrOf(good.result["perf"]["match_key"], "concurrency") == "8");
  }
  // Run 4, 15 % lower, under strace: FAILED with perf_regression and the table.
  bench.SetThroughput("850.0");
  const std::string trace = state.path() + "/connect.trace";
  CliOptions traced = options_for("post-merge");
  traced.program = "/usr/bin/strace";
  traced.args.insert(traced.args.begin(), {"-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o",
                                           trace, TRTLLM_RUN_BIN});
  GatedRun regressed = RunGated(traced);
  INFO(regressed.run.Describe());
  CHECK(regressed.run.exit_code == 1);
  REQUIRE(regressed.result.IsObject());
  CHECK(StrOf(regressed.result, "status") == "FAILED");
  CHECK_THAT(StrOf(regressed.result, "diagnosis"), Catch::StartsWith("perf_regression: "));
  CHECK_THAT(StrOf(regressed.result, "diagnosis"), Catch::Contains("total_token_throughput"));
  const rapidjson::Value* row = GateRow(regressed.result, "total_token_throughput");
  REQUIRE(row != nullptr);
  CHECK((*row)["regressed"].GetBool());
  CHECK((*row)["baseline"].GetDouble() == Approx(962.5));  // (3 * 1000 + 850) / 4, one day
  CHECK((*row)["threshold"].GetDouble() == 0.05);
  CHECK(regressed.result["perf"]["history"]["total_token_throughput"].Size() == 3);
  // result.json on disk says the same as stdout.
  rapidjson::Document on_disk = ReadResultJson(StrOf(regressed.result, "work_dir"));
  CHECK(StrOf(on_disk, "status") == "FAILED");
  const std::string calls = ReadTextFile(trace);
  INFO(calls);
  CHECK_FALSE(calls.empty());  // strace saw the processes (a connect to a unix socket is fine)
  CHECK(calls.find("AF_INET") == std::string::npos);
  CHECK(calls.find("AF_INET6") == std::string::npos);

  // warn annotates only; off records without gating.
  GatedRun warned = RunGated(options_for("warn"));
  INFO(warned.run.Describe());
  CHECK(warned.run.exit_code == 0);
  CHECK(StrOf(warned.result, "status") == "PASSED");
  CHECK(warned.result["perf"]["gate"]["regressed"].GetBool());
  bool noted = false;
  for (const rapidjson::Value& note : warned.result["notes"].GetArray()) {
    noted = noted || std::string(note.GetString()).find("perf_regression") != std::string::npos;
  }
  CHECK(noted);

  // perf compare: the first run against the regressed one.
  GatedRun off = RunGated(options_for("off"));
  CHECK_FALSE(off.result["perf"].HasMember("gate"));
  CliRun compare = RunCli(
      {"perf", "compare", StrOf(warned.result, "work_dir"), StrOf(regressed.result, "work_dir")});
  INFO(compare.Describe());
  CHECK(compare.exit_code == 0);
  CHECK_THAT(compare.stdout_text, Catch::Contains("total_token_throughput (tok/s)"));
  CliRun bad = RunCli({"perf", "compare", repo.path()});
  CHECK(bad.exit_code == 2);
  CliRun not_dir = RunCli({"perf", "compare", repo.path(), repo.path()});
  CHECK(not_dir.exit_code == 2);
  CHECK_THAT(not_dir.stderr_text, Catch::Contains("is not a finished work dir"));
}

TEST_CASE("perf gate: bad --perf-gate and --perf-baseline are exit 2 and nothing runs",
          "[cli][perf]") {
  TempDir repo("trtllm_perf_bad");
  StandInBench bench;
  const std::string baseline = repo.path() + "/baseline.json";
  WriteTextFile(baseline, "{\"version\": 1, \"entries\": [{\"metrics\": {\"tput\": {}}}]}");
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--perf-gate", "strict"},
        std::vector<std::string>{"--perf-baseline", baseline},
        std::vector<std::string>{"--perf-baseline", repo.path() + "/missing.json"}}) {
    CliOptions options;
    options.args = {"run",         "--scenario", "local_direct",   "--bench-cmd", kBenchCmd,
                    "--repo-root", repo.path(),  "--skip-install", "true",        "--no-history"};
    options.args.insert(options.args.end(), flags.begin(), flags.end());
    options.env = {{"PATH", bench.Path()}};
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains(flags[0]));
    CHECK(FindSingleWorkDir(repo.path()).empty());
  }
}

TEST_CASE("perf gate on the Slurm test cluster: 10 good runs, run 11 drops 15 %",
          "[slurm][cli][perf]") {
  EnsureSlurm();
  TempDir repo("trtllm_perf_slurm");
  TempDir state("trtllm_perf_slurm_state");
  StandInBench bench;
  const std::string store = state.path() + "/history.sqlite";
  auto run = [&](const std::string& gate) {
    CliOptions options;
    options.args = {"run",     "--scenario",        "local_slurm", "--partition",
                    "batch",   "--skip-install",    "true",        "--container-runtime",
                    "none",    "--container-image", "none",        "--bench-cmd",
                    kBenchCmd, "--repo-root",       repo.path(),   "--history",
                    store,     "--perf-gate",       gate,          "--json"};
    options.env = {{"PATH", bench.Path()}};
    options.timeout_seconds = 180;
    return RunGated(options);
  };
  for (int i = 1; i <= 10; ++i) {
    // Good runs vary by +-1 %, as real ones do.
    bench.SetThroughput(std::to_string(1000 + (i % 3 - 1) * 10) + ".0");
    GatedRun good = run("post-merge");
    INFO("run " << i << ": " << good.run.Describe());
    REQUIRE(good.run.exit_code == 0);
  }
  bench.SetThroughput("850.0");  // 15 % below 1000
  GatedRun eleventh = run("post-merge");
  INFO(eleventh.run.Describe());
  CHECK(eleventh.run.exit_code == 1);
  REQUIRE(eleventh.result.IsObject());
  CHECK(StrOf(eleventh.result, "status") == "FAILED");
  CHECK_THAT(StrOf(eleventh.result, "diagnosis"), Catch::StartsWith("perf_regression: "));
  const rapidjson::Value* row = GateRow(eleventh.result, "token_throughput");
  REQUIRE(row != nullptr);
  CHECK((*row)["regressed"].GetBool());
  CHECK((*row)["change"].GetDouble() < -0.1);
  CHECK(eleventh.result["perf"]["history"]["token_throughput"].Size() == 10);
  GatedRun warned = run("warn");
  INFO(warned.run.Describe());
  CHECK(warned.run.exit_code == 0);
  CHECK(StrOf(warned.result, "status") == "PASSED");
  CHECK(warned.result["perf"]["gate"]["regressed"].GetBool());
}

}  // namespace
}  // namespace trtllm_run_test
