// The silence timeout's parts that need no job: its duration syntax (compound forms such
// as 1h30m), job_spec.json, and the verdicts and diagnosis of a job stopped for silence,
// locally (JudgeLocalRun) and on Slurm (JudgeSlurmJob).
#include <catch2/catch.hpp>
#include <string>

#include "supervise/diagnosis.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/supervise/local_run_verdict.h"
#include "trtllm_run/sdk/text.h"

using namespace trtllm_run;

TEST_CASE("silence timeout: durations of several units, h before m before s", "[silence][text]") {
  struct Case {
    const char* text;
    int seconds;
  };
  const Case cases[] = {{"1h30m", 5400}, {"2h", 7200},      {"90s", 90},
                        {"1m30s", 90},   {"1h0m30s", 3630}, {"1h30s", 3630},
                        {"90", 90},      {" 1h30m ", 5400}, {"0h5m", 300}};
  for (const Case& c : cases) {
    INFO(c.text);
    Result<int> parsed = ParseDurationSeconds(c.text, "silence_timeout");
    REQUIRE(parsed.ok());
    CHECK(parsed.value() == c.seconds);
  }
  for (const char* bad : {"1h1h", "30m1h", "1s1m", "1h30", "1hm", "h30m", "1h 30m", "0h0m",
                          "596524h", "1h2147483647s"}) {
    INFO("value: [" << bad << "]");
    Result<int> parsed = ParseDurationSeconds(bad, "silence_timeout");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidInput);
    CHECK_THAT(parsed.status().message(), Catch::Contains("silence_timeout '" + std::string(bad)));
  }
  CHECK_THAT(ParseDurationSeconds("30m1h", "x").status().hint(), Catch::Contains("in that order"));
}

TEST_CASE("silence timeout: job_spec.json holds it only when set", "[silence][job_spec]") {
  JobSpec spec;
  spec.scenario = "local_direct";
  spec.work_dir = "/tmp/w";
  spec.log_file = "/tmp/w/x.log";
  CHECK(JobSpecToJson(spec).find("silence_timeout_seconds") == std::string::npos);
  spec.silence_timeout_seconds = 7200;
  std::string text = JobSpecToJson(spec);
  CHECK_THAT(text, Catch::Contains("\"silence_timeout_seconds\": 7200"));
  Result<JobSpec> read = JobSpecFromJson(text, "job_spec.json");
  REQUIRE(read.ok());
  CHECK(read->silence_timeout_seconds == 7200);
}

TEST_CASE("silence timeout: a local job stopped for silence is HANG_DETECTED naming the last line",
          "[silence][verdict]") {
  LocalRunEvidence e;
  e.stop = StopReason::kSilence;
  e.silence_timeout_seconds = 90;
  e.last_output_line = "Loading checkpoint shards: 50%";
  e.stopped_how = "stopped with SIGTERM";
  RunResult r;
  JudgeLocalRun(e, &r);
  CHECK(r.status == RunStatus::kHangDetected);
  CHECK(r.reason ==
        "no output for 90s (last line: \"Loading checkpoint shards: 50%\"); stopped with SIGTERM");
  CHECK(r.details["silence_timeout_seconds"] == "90");

  e.last_output_line.clear();
  RunResult silent;
  JudgeLocalRun(e, &silent);
  CHECK(silent.reason == "no output for 90s (nothing was printed); stopped with SIGTERM");
}

TEST_CASE("silence timeout: a Slurm job scancelled for silence is HANG_DETECTED once it ended",
          "[silence][verdict][slurm]") {
  SlurmJobEvidence e;
  e.job_id = "42";
  e.action = SlurmAction::kSilence;
  e.action_detail = "1: [rank1] waiting for allreduce";
  e.silence_timeout_seconds = 7200;
  e.action_confirmed = true;
  SlurmJobRecord record;
  record.job_id = "42";
  record.state = "CANCELLED";
  e.controller = record;
  e.controller_final = true;
  RunResult r = JudgeSlurmJob(e);
  CHECK(r.status == RunStatus::kHangDetected);
  CHECK(r.reason ==
        "no output for 7200s (last line: \"1: [rank1] waiting for allreduce\"); job 42 was "
        "cancelled with scancel and left the queue");
  CHECK(r.details["silence_timeout_seconds"] == "7200");
  CHECK_THAT(r.diagnosis, Catch::Contains("No output for 2h (--silence-timeout)"));

  e.action_confirmed = false;
  RunResult unconfirmed = JudgeSlurmJob(e);
  CHECK(unconfirmed.status == RunStatus::kError);
  CHECK_THAT(unconfirmed.reason, Catch::StartsWith("no output for 7200s"));
  CHECK_THAT(unconfirmed.reason, Catch::Contains("was not seen to end"));
}

TEST_CASE("silence timeout: the diagnosis names the flag, not a 'hang detected' line",
          "[silence][diagnosis]") {
  DiagnosisInput in;
  in.status = RunStatus::kHangDetected;
  in.silence_timeout_seconds = 90;
  in.log_file = "/w/x.log";
  std::string text = DiagnoseFailure(in);
  CHECK_THAT(text, Catch::StartsWith("No output for 90s (--silence-timeout)"));
  CHECK_THAT(text, Catch::Contains("/w/x.log"));
  CHECK_THAT(text, !Catch::Contains("'hang detected' in the log"));
}
