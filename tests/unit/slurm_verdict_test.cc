// Slurm records and verdicts on real outputs of the test cluster (tests/fixtures/slurm/,
// captured by tests/fixtures/slurm/capture.sh): each case directory holds the job's .out
// and .err and what scontrol, squeue and sacct said once it ended.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/slurm_time.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/supervise/log_follower.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

fs::path FixtureDir() { return fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "slurm"; }

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The end-marker token of the fixtures' scripts (capture.sh END_TOKEN).
const char kFixtureEndToken[] = "00112233445566778899aabbccddeeff";

const std::vector<std::string> kPytestFailure = {"FAILED", "ERROR"};
const std::vector<std::string> kPytestSuccess = {"passed"};

// What the watcher would know about a fixture case at the end: the scanned output, the
// controller's final record, and accounting unless `with_accounting` is false.
struct Case {
  PatternScanner out{JobOutputPatterns(kPytestFailure, kPytestSuccess, kFixtureEndToken)};
  PatternScanner err{JobOutputPatterns(kPytestFailure, kPytestSuccess, kFixtureEndToken)};
  SlurmJobEvidence evidence;
};

// Lines of `text` that do not contain `drop` ("" drops nothing).
std::string Without(const std::string& text, const std::string& drop) {
  if (drop.empty()) return text;
  std::string kept;
  for (const std::string& line : Lines(text)) {
    if (line.find(drop) == std::string::npos) kept += line + "\n";
  }
  return kept;
}

// `drop`: the job's output as if it had no lines containing this text (what another
// cluster's slurmstepd, or a job killed earlier, would have left).
std::unique_ptr<Case> Load(const std::string& name, bool with_controller = true,
                           bool with_accounting = true, const std::string& drop = "") {
  auto c = std::make_unique<Case>();
  fs::path dir = FixtureDir() / name;
  REQUIRE(fs::exists(dir / "scontrol.txt"));
  std::string out = Without(Slurp(dir / "out.txt"), drop);
  std::string err = Without(Slurp(dir / "err.txt"), drop);
  c->out.Feed(out);
  c->err.Feed(err);
  std::vector<SlurmJobRecord> records = ParseScontrolJobs(Slurp(dir / "scontrol.txt"));
  REQUIRE(records.size() == 1);
  SlurmJobEvidence& e = c->evidence;
  e.job_id = records[0].job_id;
  e.workflow_type = "pytest";
  e.scenario = "local_slurm";
  e.log_file = "/work_dir/" + name + ".out";
  e.err_file = "/work_dir/" + name + ".err";
  e.time_limit = "00:05:00";
  if (with_controller) {
    e.controller = records[0];
    e.controller_final = IsTerminalSlurmState(records[0].state);
  } else {
    e.purged = true;
  }
  e.accounting_available = with_accounting && fs::exists(dir / "sacct.txt");
  if (e.accounting_available) e.accounting = ParseSacct(Slurp(dir / "sacct.txt"));
  JobOutputScan scan;
  scan.out = &c->out;
  scan.err = err.empty() ? nullptr : &c->err;
  scan.failure_count = kPytestFailure.size();
  scan.success_count = kPytestSuccess.size();
  scan.out_exists = true;
  scan.out_bytes = out.size();
  scan.out_head = Lines(out);
  scan.out_tail = Lines(out);
  scan.err_head = Lines(err);
  scan.end_token = kFixtureEndToken;
  AddOutputEvidence(scan, &e);
  return c;
}

}  // namespace

TEST_CASE("Slurm exit statuses and states parse as Slurm prints them", "[slurm_verdict]") {
  CHECK(ParseSlurmExit("3:0") == SlurmExit{3, 0});
  CHECK(ParseSlurmExit("0:9") == SlurmExit{0, 9});
  CHECK(ParseSlurmExit("137:0").code == 137);
  CHECK(!ParseSlurmExit("").code.has_value());
  CHECK(NormalizeSlurmState("CANCELLED by 0") == "CANCELLED");
  CHECK(NormalizeSlurmState("CANCELLED+") == "CANCELLED");
  CHECK(NormalizeSlurmState("F") == "FAILED");
  CHECK(NormalizeSlurmState("OOM") == "OUT_OF_MEMORY");
  CHECK(NormalizeSlurmState("completing") == "COMPLETING");
  CHECK(IsTerminalSlurmState("NODE_FAIL"));
  CHECK_FALSE(IsTerminalSlurmState("COMPLETING"));
  CHECK_FALSE(IsTerminalSlurmState("RUNNING"));
  CHECK_FALSE(IsTerminalSlurmState("SOMETHING_NEW"));
}

TEST_CASE("scontrol job records parse in the one-line and multi-line formats", "[slurm_verdict]") {
  std::string one_line = Slurp(FixtureDir() / "failed" / "scontrol.txt");
  std::vector<SlurmJobRecord> records = ParseScontrolJobs(one_line);
  REQUIRE(records.size() == 1);
  CHECK(records[0].job_id == "49");
  CHECK(records[0].job_name == "research.failed");
  CHECK(records[0].state == "FAILED");
  CHECK(records[0].reason == "NonZeroExitCode");
  CHECK(records[0].exit == SlurmExit{3, 0});
  CHECK(records[0].std_out == "/work_dir/failed_49.out");
  CHECK(records[0].time_limit == "00:05:00");

  // Two jobs, a name with spaces, and the multi-line layout of `scontrol show job`.
  std::string text =
      "JobId=7 JobName=my job name UserId=root(0) JobState=RUNNING Reason=None ExitCode=0:0\n"
      "JobId=8 JobName=x\n"
      "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
      "   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)\n"
      "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15\n"
      "   NodeList=localhost\n";
  records = ParseScontrolJobs(text);
  REQUIRE(records.size() == 2);
  CHECK(records[0].job_name == "my job name");
  CHECK(records[0].state == "RUNNING");
  CHECK(records[1].state == "TIMEOUT");
  CHECK(records[1].reason == "TimeLimit");
  CHECK(records[1].exit == SlurmExit{0, 15});
  CHECK(records[1].node_list == "localhost");
}

TEST_CASE("the controller's and accounting's error messages are recognised", "[slurm_verdict]") {
  CHECK(IsInvalidJobIdError(Slurp(FixtureDir() / "scontrol_invalid_job_id.txt")));
  CHECK_FALSE(
      IsInvalidJobIdError("slurm_load_jobs error: Socket timed out on send/recv operation"));
  CHECK(IsAccountingDisabledError(Slurp(FixtureDir() / "sacct_accounting_disabled.txt")));
  CHECK_FALSE(IsAccountingDisabledError("sacct: error: slurmdbd: Connection refused"));
}

TEST_CASE("sacct rows parse with their steps and who cancelled", "[slurm_verdict]") {
  std::vector<SlurmAcctRecord> rows = ParseSacct(Slurp(FixtureDir() / "failed" / "sacct.txt"));
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].id == "49");
  CHECK(rows[0].step.empty());
  CHECK(rows[0].state == "FAILED");
  CHECK(rows[0].exit == SlurmExit{3, 0});
  CHECK(rows[1].step == "batch");
  CHECK(rows[3].id == "49.1");
  CHECK(rows[3].step == "1");
  CHECK(rows[3].name == "bash");

  rows = ParseSacct(Slurp(FixtureDir() / "cancelled" / "sacct.txt"));
  REQUIRE(!rows.empty());
  CHECK(rows[0].state == "CANCELLED");
  CHECK(rows[0].state_text == "CANCELLED by 0");
  CHECK(rows[0].cancelled_by == "0");

  rows = ParseSacct("5|COMPLETED|0:0|0:0|None|a|b|00:00:01|n1|name|with|bars\n");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].name == "name|with|bars");
}

TEST_CASE("scontrol show config yields MinJobAge, KillWait and accounting", "[slurm_verdict]") {
  SlurmConfigFacts facts = ParseSlurmConfig(Slurp(FixtureDir() / "scontrol_show_config.txt"));
  CHECK(facts.min_job_age_seconds == 20);
  CHECK(facts.kill_wait_seconds == 5);
  CHECK(facts.accounting == true);
  CHECK(facts.cluster_name == "trtllm-test");
  facts = ParseSlurmConfig(Slurp(FixtureDir() / "scontrol_show_config_noacct.txt"));
  CHECK(facts.min_job_age_seconds == 10);
  CHECK(facts.accounting == false);
  CHECK(facts.cluster_name == "trtllm-noacct");
}

TEST_CASE("slurm.conf itself yields the same facts, with Slurm's defaults", "[slurm_verdict]") {
  // The noacct cluster's file as tests/services/slurm.sh writes it.
  SlurmConfigFacts facts = ParseSlurmConfFile(Slurp(FixtureDir() / "slurm_noacct.conf"));
  CHECK(facts.min_job_age_seconds == 10);
  CHECK(facts.kill_wait_seconds == 5);
  CHECK(facts.accounting == false);
  CHECK(facts.cluster_name == "trtllm-noacct");
  facts = ParseSlurmConfFile(
      "clustername=x\n# MinJobAge=5\nACCOUNTINGSTORAGETYPE=accounting_storage/slurmdbd # dbd\n");
  CHECK(facts.min_job_age_seconds == 300);
  CHECK(facts.kill_wait_seconds == 30);
  CHECK(facts.accounting == true);
  CHECK(facts.cluster_name == "x");
}

TEST_CASE("Slurm durations convert to seconds", "[slurm_verdict]") {
  CHECK(ParseSlurmDuration("5") == 300);
  CHECK(ParseSlurmDuration("01:30") == 90);
  CHECK(ParseSlurmDuration("02:00:00") == 7200);
  CHECK(ParseSlurmDuration("1-00:00:00") == 86400);
  CHECK(ParseSlurmDuration("2-3") == 2 * 86400 + 3 * 3600);
  CHECK(!ParseSlurmDuration("UNLIMITED"));
  CHECK(!ParseSlurmDuration("1:x"));
}

TEST_CASE("the end marker is a whole line with the script's token, the last one counts",
          "[slurm_verdict][end_marker]") {
  const std::string token = kFixtureEndToken;
  const std::string marker = "[trtllm-run] job finished with exit code";
  CHECK(ParseEndMarker(marker + " 3 (token " + token + ")", token) == 3);
  CHECK(ParseEndMarker(marker + " 0 (token " + token + ")\r", token) == 0);
  // What a payload can print without the token: none is the marker.
  CHECK_FALSE(ParseEndMarker(marker + " 0", token));                           // no token
  CHECK_FALSE(ParseEndMarker(marker + " 0 (token )", token));                  // empty token
  CHECK_FALSE(ParseEndMarker(marker + " 0 (token 0123456789abcdef)", token));  // guessed
  CHECK_FALSE(ParseEndMarker(marker + " 0 (token " + token + ")", ""));        // job without one
  CHECK_FALSE(ParseEndMarker(marker + " 0 (token " + token + ")", "x" + token));
  // Only the whole line: not embedded, not prefixed (srun -l labels), not followed.
  CHECK_FALSE(ParseEndMarker("hi " + marker + " 0 (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker("0: " + marker + " 0 (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker(marker + " 0 (token " + token + ") and more", token));
  CHECK_FALSE(ParseEndMarker(" " + marker + " 0 (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker(marker + " 0  (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker(marker + " -1 (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker(marker + "  (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker(marker + " 0x1 (token " + token + ")", token));
  CHECK_FALSE(ParseEndMarker("[trtllm-run] step run: exit code 3", token));
  // The last marker line wins: a real failure after an earlier (forged or not) clean one.
  std::vector<std::string> lines = {marker + " 0 (token " + token + ")", "boom",
                                    marker + " 1 (token " + token + ")", "x " + marker + " 0"};
  CHECK(LastEndMarker(lines, token) == 1);
  CHECK_FALSE(LastEndMarker({marker + " 0", "hi " + marker + " 0 (token " + token + ")"}, token));
  // The token comes from the script's own echo line; scripts without one have none.
  std::string echo = EndMarkerEcho(token);
  CHECK(echo == "echo \"" + marker + " ${exit_code} (token " + token + ")\"");
  CHECK(EndMarkerTokenOfScript("#!/bin/bash\nrun_step a b\n\n" + echo + "\nexit 0\n") == token);
  CHECK(EndMarkerTokenOfScript("#!/bin/bash\necho \"" + marker + " ${exit_code}\"\n") == "");
  CHECK(EndMarkerTokenOfScript("echo \"" + marker + " ${exit_code} (token $(id))\"\n") == "");
  CHECK(EndMarkerTokenOfScript("") == "");
  // Fresh tokens: 32 hex digits, never the same twice.
  std::string a = NewEndMarkerToken(), b = NewEndMarkerToken();
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}

TEST_CASE("a marker without the token, mid-line or before a real failure is not the end",
          "[slurm_verdict][end_marker]") {
  const std::string token = kFixtureEndToken;
  const std::string marker = "[trtllm-run] job finished with exit code";
  struct Row {
    const char* what;
    std::string out;
    std::optional<int> expected;
  };
  for (const Row& row : {
           Row{"no token", marker + " 0\n", std::nullopt},
           Row{"empty token", marker + " 0 (token )\n", std::nullopt},
           Row{"guessed token", marker + " 0 (token ffeeddccbbaa99887766554433221100)\n",
               std::nullopt},
           Row{"mid-line", "x" + marker + " 0 (token " + token + ")\n", std::nullopt},
           Row{"then a real failure",
               marker + " 0 (token " + token + ")\nboom\n" + marker + " 1 (token " + token + ")\n",
               1},
       }) {
    INFO(row.what);
    PatternScanner out{JobOutputPatterns({}, {}, token)};
    out.Feed(row.out);
    JobOutputScan scan;
    scan.out = &out;
    scan.out_exists = true;
    scan.out_tail = Lines(row.out);
    scan.end_token = token;
    SlurmJobEvidence e;
    e.job_id = "91";
    e.purged = true;  // no final record: the marker alone would decide (rule 3)
    AddOutputEvidence(scan, &e);
    CHECK(e.end_marker_exit == row.expected);
    RunResult result = JudgeSlurmJob(e);
    CHECK(result.status != RunStatus::kPassed);
  }
}

TEST_CASE("the silence reason quotes the program's last line, never the launcher's xtrace",
          "[slurm_verdict]") {
  // The custom-command script traces its `cd` to .err (set -x); read after .out it must
  // not replace "loading the engine" (seen on the ASan CI run of the remote silence test).
  CHECK(LastProgramLine({"0: loading the engine", "0: + cd /home/u/TensorRT-LLM", ""}) ==
        "0: loading the engine");
  CHECK(LastProgramLine({"loading", "++ x=1", "+ '[' 1 -le 1 ']'", "  \t"}) == "loading");
  CHECK(LastProgramLine({"+ cd /x", "0: + rank=0"}).empty());
  CHECK(LastProgramLine({}).empty());
  // Lines that only look alike are the program's.
  CHECK(LastProgramLine({"a", "+1 passed"}) == "+1 passed");
  CHECK(LastProgramLine({"a", "0: +"}) == "0: +");
  CHECK(LastProgramLine({"a", "x + y"}) == "x + y");
  CHECK(LastProgramLine({"a", "12:+ b"}) == "12:+ b");
  CHECK(LastProgramLine({"a", "12+ b"}) == "12+ b");
}

TEST_CASE("the job's own lines parse", "[slurm_verdict]") {
  std::optional<StepExitLine> step = ParseStepExitLine("[trtllm-run] step prepare: exit code 137");
  REQUIRE(step);
  CHECK(step->step == "prepare");
  CHECK(step->exit_code == 137);
  CHECK(!ParseStepExitLine("[trtllm-run] step run: started"));
  std::optional<CancelLine> line = ParseCancelLine(
      "slurmstepd-localhost: error: *** JOB 55 ON localhost CANCELLED AT 2026-11-29T12:39:23 DUE "
      "TO TIME LIMIT ***");
  REQUIRE(line);
  CHECK(line->due_to == "TIME LIMIT");
  line = ParseCancelLine("slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2020-01-01T00:00:00 ***");
  REQUIRE(line);
  CHECK(line->due_to.empty());
  line = ParseCancelLine("*** JOB 9 CANCELLED AT 2020-01-01T00:00:00 *** BY uid 1000");
  REQUIRE(line);
  CHECK(line->by == "1000");
  CHECK(!ParseCancelLine("all good"));
}

// The verdict table on the captured cases, with every source of evidence and with the
// sources a cluster may lack (no accounting; the controller purged the job).
TEST_CASE("verdicts of the captured jobs", "[slurm_verdict]") {
  struct Row {
    const char* name;
    bool controller;
    bool accounting;
    RunStatus status;
    const char* reason_has;
  };
  const Row rows[] = {
      {"passed", true, true, RunStatus::kPassed, "completed with exit code 0"},
      {"passed", true, false, RunStatus::kPassed, "COMPLETED (scontrol)"},
      {"passed", false, false, RunStatus::kPassed, "purged after MinJobAge"},
      {"failed", true, true, RunStatus::kFailed, "failing step step1 (49.1, bash, FAILED 3:0)"},
      {"failed", true, false, RunStatus::kFailed, "step step1: exit code 3"},
      {"failed", false, false, RunStatus::kFailed, "finished with exit code 3"},
      {"oom", true, true, RunStatus::kOutOfMemory, "exceeded memory limit"},
      {"oom", true, false, RunStatus::kOutOfMemory, "exceeded memory limit"},
      {"oom", false, false, RunStatus::kOutOfMemory, "exceeded memory limit"},
      {"timeout", true, true, RunStatus::kTimeout, "TIMEOUT (sacct)"},
      {"timeout", true, false, RunStatus::kTimeout, "TIMEOUT (scontrol)"},
      {"timeout", false, false, RunStatus::kTimeout, "DUE TO TIME LIMIT"},
      {"cancelled", true, true, RunStatus::kCancelled, "cancelled by uid 0 outside trtllm-run"},
      {"cancelled", true, false, RunStatus::kCancelled, "CANCELLED (scontrol)"},
      {"cancelled", false, false, RunStatus::kCancelled, "CANCELLED AT"},
      {"cancelled_pending", true, true, RunStatus::kCancelled, "reason BeginTime"},
      {"cancelled_pending", false, false, RunStatus::kError, "it wrote no output"},
      {"noacct_passed", true, false, RunStatus::kPassed, "COMPLETED (scontrol)"},
      {"noacct_passed", false, false, RunStatus::kPassed, "accounting is disabled"},
      {"noacct_failed", true, false, RunStatus::kFailed, "exit code 7"},
      {"noacct_failed", false, false, RunStatus::kFailed, "finished with exit code 7"},
      // The hang case without trtllm-run's own action: someone else cancelled it.
      {"hang", true, true, RunStatus::kCancelled, "outside trtllm-run"},
  };
  for (const Row& row : rows) {
    INFO(row.name << " controller=" << row.controller << " accounting=" << row.accounting);
    auto c = Load(row.name, row.controller, row.accounting);
    if (!row.controller && row.name == std::string("cancelled_pending"))
      c->evidence.log_exists = false;
    RunResult result = JudgeSlurmJob(c->evidence);
    INFO("reason: " << result.reason);
    CHECK(RunStatusName(result.status) == std::string(RunStatusName(row.status)));
    CHECK(result.reason.find(row.reason_has) != std::string::npos);
    CHECK(result.details["job_id"] == c->evidence.job_id);
  }
}

TEST_CASE("a FAILED pytest job names the failing test and the exit code", "[slurm_verdict]") {
  auto c = Load("failed");
  RunResult result = JudgeSlurmJob(c->evidence);
  CHECK(result.status == RunStatus::kFailed);
  CHECK(result.exit_code == 3);
  CHECK(result.details["failing_step"].find("49.1") != std::string::npos);
  CHECK(result.diagnosis.find("tests/a.py::test_x - AssertionError: boom") != std::string::npos);
  CHECK(result.reason.find("failure pattern 'FAILED'") != std::string::npos);
}

TEST_CASE("OUT_OF_MEMORY from accounting states, as real clusters with cgroups report it",
          "[slurm_verdict]") {
  // On the test cluster (no cgroups) the OOM is only visible through slurmstepd's lines;
  // with cgroups sacct reports the state. Both must give OUT_OF_MEMORY.
  SlurmJobEvidence e;
  e.job_id = "77";
  e.accounting_available = true;
  e.accounting = ParseSacct(
      "77|OUT_OF_MEMORY|0:125|0:0|None|a|b|00:00:05|n1|job\n"
      "77.batch|OUT_OF_MEMORY|0:125|||a|b|00:00:05|n1|batch\n"
      "77.0|OUT_OF_MEMORY|0:125|||a|b|00:00:05|n1|python\n");
  RunResult result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kOutOfMemory);
  CHECK(result.diagnosis.find("educe the batch size") != std::string::npos);

  // Only a step ran out of memory; the job itself is FAILED.
  e.accounting = ParseSacct(
      "78|FAILED|1:0|0:0|None|a|b|00:00:05|n1|job\n"
      "78.0|OUT_OF_MEMORY|0:125|||a|b|00:00:05|n1|python\n");
  e.job_id = "78";
  CHECK(JudgeSlurmJob(e).status == RunStatus::kOutOfMemory);
}

TEST_CASE("OUT_OF_MEMORY without any records: the end line or the cancel line suffices",
          "[slurm_verdict]") {
  // noacct_oom: a step over its --mem on the cluster without accounting, judged after the
  // controller forgot it (MinJobAge): only the job's own lines remain. With the
  // memory-limit line, a failing end line alone (a cgroup cluster prints no CANCELLED
  // line) or slurmstepd's cancel line alone (the whole job was killed before its end line)
  // is enough.
  struct Row {
    const char* drop;
    const char* what;
  };
  for (const Row& row : {Row{"", "both lines"}, Row{"CANCELLED AT", "the end line only"},
                         Row{"job finished with exit code", "the cancel line only"}}) {
    INFO(row.what);
    auto c = Load("noacct_oom", false, false, row.drop);
    REQUIRE_FALSE(c->evidence.oom_line.empty());
    REQUIRE(c->evidence.cancel_line.empty() == (row.drop == std::string("CANCELLED AT")));
    REQUIRE(c->evidence.end_marker_exit.has_value() ==
            (row.drop != std::string("job finished with exit code")));
    RunResult result = JudgeSlurmJob(c->evidence);
    INFO("reason: " << result.reason);
    CHECK(result.status == RunStatus::kOutOfMemory);
    CHECK(result.reason.find("exceeded memory limit") != std::string::npos);
    CHECK(result.reason.find("accounting is disabled") != std::string::npos);
  }
  // Neither: the memory-limit line alone does not say how the job ended.
  auto neither = Load("noacct_oom", false, false, "CANCELLED AT");
  neither->evidence.end_marker_exit.reset();
  CHECK(JudgeSlurmJob(neither->evidence).status == RunStatus::kError);
}

TEST_CASE("node failures, preemption and boot failures are ERROR with the reason",
          "[slurm_verdict]") {
  for (const char* state : {"NODE_FAIL", "PREEMPTED", "BOOT_FAIL"}) {
    SlurmJobEvidence e;
    e.job_id = "90";
    e.accounting_available = true;
    e.accounting =
        ParseSacct(std::string("90|") + state + "|0:0|0:0|NodeDown|a|b|00:10:00|n1|job\n");
    RunResult result = JudgeSlurmJob(e);
    INFO(state << ": " << result.reason);
    CHECK(result.status == RunStatus::kError);
    CHECK(result.reason.find(state) != std::string::npos);
    CHECK(result.reason.find("NodeDown") != std::string::npos);
    CHECK(!result.diagnosis.empty());
  }
  // Preemption as the job's output tells it, when the records are gone.
  SlurmJobEvidence e;
  e.job_id = "91";
  e.purged = true;
  e.log_exists = true;
  e.cancel_line =
      "slurmstepd: error: *** JOB 91 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION ***";
  RunResult result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kError);
  CHECK(result.reason.find("PREEMPTION") != std::string::npos);
}

TEST_CASE("unknown or missing records are ERROR with the evidence, never PASSED",
          "[slurm_verdict]") {
  SlurmJobEvidence e;
  e.job_id = "123";
  e.purged = true;
  RunResult result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kError);
  CHECK(result.reason.find("purged after MinJobAge") != std::string::npos);
  CHECK(result.reason.find("accounting is disabled") != std::string::npos);

  // Last seen running, then gone; output without an end line.
  SlurmJobRecord running;
  running.job_id = "123";
  running.state = "RUNNING";
  e.controller = running;
  e.log_exists = true;
  e.log_bytes = 10;
  result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kError);
  CHECK(result.reason.find("no \"[trtllm-run] job finished") != std::string::npos);

  // A state this version does not know is not a verdict.
  e.purged = false;
  running.state = "SOMETHING_NEW";
  e.controller = running;
  e.accounting_available = true;
  e.accounting = ParseSacct("123|SOMETHING_NEW|0:0|0:0|None|a|b|c|n|j\n");
  result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kError);
  CHECK(result.reason.find("SOMETHING_NEW") != std::string::npos);

  // Accounting that is empty while the controller is gone.
  e.controller.reset();
  e.purged = true;
  e.accounting.clear();
  result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kError);
  CHECK(result.reason.find("accounting has no record") != std::string::npos);
}

TEST_CASE("trtllm-run's own actions decide once the job is confirmed gone", "[slurm_verdict]") {
  auto c = Load("hang");
  c->evidence.action = SlurmAction::kHang;
  c->evidence.action_detail = c->evidence.hang_line;
  c->evidence.action_confirmed = true;
  RunResult result = JudgeSlurmJob(c->evidence);
  CHECK(result.status == RunStatus::kHangDetected);
  CHECK(result.reason.find("hang detected in rank 0") != std::string::npos);
  CHECK(result.diagnosis.find("deadlock") != std::string::npos);

  c->evidence.action = SlurmAction::kMonitorTimeout;
  c->evidence.monitor_timeout_seconds = 5;
  result = JudgeSlurmJob(c->evidence);
  CHECK(result.status == RunStatus::kTimeout);
  CHECK(result.reason.find("monitor_timeout_seconds=5") != std::string::npos);

  c->evidence.action = SlurmAction::kUserCancel;
  c->evidence.cancel_signal = SIGINT;
  result = JudgeSlurmJob(c->evidence);
  CHECK(result.status == RunStatus::kCancelled);
  CHECK(result.user_interrupt);
  CHECK(result.cancelled_by == "SIGINT");
  CHECK(ExitCodeFor(result) == 130);

  c->evidence.cancel_signal = SIGTERM;
  result = JudgeSlurmJob(c->evidence);
  CHECK(result.status == RunStatus::kCancelled);
  CHECK_FALSE(result.user_interrupt);

  // Not seen to end: never a clean verdict, and the job id to stop by hand.
  c->evidence.action = SlurmAction::kHang;
  c->evidence.action_confirmed = false;
  c->evidence.action_problem = "still RUNNING 60 s after scancel";
  result = JudgeSlurmJob(c->evidence);
  CHECK(result.status == RunStatus::kError);
  CHECK(result.reason.find("still RUNNING 60 s after scancel") != std::string::npos);
  CHECK(result.diagnosis.find("scancel " + c->evidence.job_id) != std::string::npos);
}

TEST_CASE("a hang line outranks the OOM kill, exit 137 and FAILED that followed it",
          "[slurm_verdict][hang]") {
  // hang_oom: TensorRT-LLM's hang detector line, then the step over its --mem (exit 137,
  // slurmstepd's memory-limit and cancel lines, sacct FAILED), judged from every set of
  // records a watch can end with.
  struct Row {
    bool controller;
    bool accounting;
    const char* source;
  };
  for (const Row& row : {Row{true, true, "FAILED (sacct)"}, Row{true, false, "FAILED (scontrol)"},
                         Row{false, false, "purged after MinJobAge"}}) {
    INFO("controller=" << row.controller << " accounting=" << row.accounting);
    auto c = Load("hang_oom", row.controller, row.accounting);
    REQUIRE_FALSE(c->evidence.oom_line.empty());
    RunResult result = JudgeSlurmJob(c->evidence);
    INFO("reason: " << result.reason);
    CHECK(result.status == RunStatus::kHangDetected);
    CHECK(ExitCodeFor(result) == 5);
    CHECK(result.details["end_line_exit_code"] == "137");
    CHECK(result.reason.find("[TRT-LLM] hang detected: no progress for 300 s") !=
          std::string::npos);
    CHECK(result.reason.find(row.source) != std::string::npos);
    CHECK(result.reason.find("exceeded memory limit") != std::string::npos);  // what followed
    CHECK(result.diagnosis.find("deadlock") != std::string::npos);
  }
}

TEST_CASE("a hang line outranks Slurm's OUT_OF_MEMORY, TIMEOUT and time-limit records",
          "[slurm_verdict][hang]") {
  const std::string hang = "0: [TRT-LLM] hang detected: no progress for 300 s";
  auto evidence = [&](const std::string& sacct) {
    SlurmJobEvidence e;
    e.job_id = "77";
    e.log_exists = true;
    e.log_bytes = 100;
    e.hang_line = hang;
    e.accounting_available = true;
    e.accounting = ParseSacct(sacct);
    return e;
  };
  struct Row {
    const char* name;
    SlurmJobEvidence e;
    const char* followed;
  };
  std::vector<Row> rows;
  // With cgroups: the job and its step OUT_OF_MEMORY.
  rows.push_back({"OUT_OF_MEMORY",
                  evidence("77|OUT_OF_MEMORY|0:125|0:0|None|a|b|00:00:05|n1|job\n"
                           "77.0|OUT_OF_MEMORY|0:125|||a|b|00:00:05|n1|python\n"),
                  "OUT_OF_MEMORY (sacct)"});
  // Only a step ran out of memory; the job itself FAILED.
  rows.push_back({"step OUT_OF_MEMORY",
                  evidence("77|FAILED|1:0|0:0|None|a|b|00:00:05|n1|job\n"
                           "77.0|OUT_OF_MEMORY|0:125|||a|b|00:00:05|n1|python\n"),
                  "FAILED (sacct)"});
  rows.push_back(
      {"TIMEOUT", evidence("77|TIMEOUT|0:0|0:0|None|a|b|00:10:00|n1|job\n"), "TIMEOUT (sacct)"});
  rows.push_back(
      {"DEADLINE", evidence("77|DEADLINE|0:0|0:0|None|a|b|00:10:00|n1|job\n"), "DEADLINE (sacct)"});
  const std::string time_limit =
      "slurmstepd: error: *** JOB 77 ON n1 CANCELLED AT 2026-01-01T00:10:00 DUE TO TIME LIMIT ***";
  Row cancelled{"CANCELLED at the time limit",
                evidence("77|CANCELLED by 0|0:15|0:0|None|a|b|00:10:00|n1|job\n"), "TIME LIMIT"};
  cancelled.e.cancel_line = time_limit;
  rows.push_back(cancelled);
  // No records at all (purged, no accounting): the job's own lines.
  SlurmJobEvidence purged;
  purged.job_id = "77";
  purged.purged = true;
  purged.log_exists = true;
  purged.log_bytes = 100;
  purged.hang_line = hang;
  purged.cancel_line = time_limit;
  rows.push_back({"purged, cancelled at the time limit", purged, "TIME LIMIT"});
  SlurmJobEvidence no_end = purged;
  no_end.cancel_line.clear();
  rows.push_back({"purged, no end line", no_end, "no final state"});
  // TensorRT-LLM's hang detector killed its own process (exit 137) on a cluster without
  // accounting, judged after the controller forgot the job: only the end line remains.
  SlurmJobEvidence killed = no_end;
  killed.end_marker_exit = 137;
  rows.push_back({"purged, no accounting, end line 137", killed,
                  "finished with exit code 137 (its end line; the controller no longer knows it "
                  "(purged after MinJobAge); accounting is disabled)"});
  for (const Row& row : rows) {
    RunResult result = JudgeSlurmJob(row.e);
    INFO(row.name << ": " << result.reason);
    CHECK(result.status == RunStatus::kHangDetected);
    CHECK(result.reason.find(hang) != std::string::npos);
    CHECK(result.reason.find(row.followed) != std::string::npos);
  }
}

TEST_CASE("a hang line outranks a clean exit, but not a person's scancel or a node failure",
          "[slurm_verdict][hang]") {
  const std::string hang = "[TRT-LLM] hang detected: no progress for 300 s";
  SlurmJobEvidence e;
  e.job_id = "78";
  e.log_exists = true;
  e.hang_line = hang;
  e.accounting_available = true;
  // Exit 0 after the hang line: HANG_DETECTED, as when trtllm-run had cancelled it first
  // (which of the two happens is a matter of timing).
  e.accounting = ParseSacct("78|COMPLETED|0:0|0:0|None|a|b|00:00:05|n1|job\n");
  RunResult completed = JudgeSlurmJob(e);
  CHECK(completed.status == RunStatus::kHangDetected);
  CHECK(completed.reason ==
        "job 78 logged \"" + hang + "\", then completed with exit code 0: state COMPLETED (sacct)");
  CHECK(completed.exit_code == 0);
  // The same without any record, from the end marker alone.
  SlurmJobEvidence purged = e;
  purged.accounting.clear();
  purged.accounting_available = false;
  purged.purged = true;
  purged.end_marker_exit = 0;
  CHECK(JudgeSlurmJob(purged).status == RunStatus::kHangDetected);

  e.accounting = ParseSacct("78|CANCELLED by 1000|0:15|0:0|None|a|b|00:00:05|n1|job\n");
  CHECK(JudgeSlurmJob(e).status == RunStatus::kCancelled);

  e.accounting = ParseSacct("78|NODE_FAIL|0:0|0:0|NodeDown|a|b|00:00:05|n1|job\n");
  CHECK(JudgeSlurmJob(e).status == RunStatus::kError);

  // trtllm-run's own monitor timeout, acted on before any hang line was seen, stays
  // TIMEOUT (its test above); a hang it acted on is HANG_DETECTED with the line.
  e.action = SlurmAction::kHang;
  e.action_detail = hang;
  e.action_confirmed = true;
  RunResult acted = JudgeSlurmJob(e);
  CHECK(acted.status == RunStatus::kHangDetected);
  CHECK(acted.reason ==
        "log line \"" + hang + "\"; job 78 was cancelled with scancel and left the queue");
}

TEST_CASE("an empty output file points at the .err file", "[slurm_verdict]") {
  SlurmJobEvidence e;
  e.job_id = "60";
  e.log_exists = true;
  e.log_bytes = 0;
  e.err_file = "/w/x_60.err";
  e.err_lines = {"pyxis: importing docker image: nvcr.io#nvidia/x:1", "pyxis: failed to import"};
  SlurmJobRecord record;
  record.job_id = "60";
  record.state = "FAILED";
  record.exit = SlurmExit{1, 0};
  e.controller = record;
  RunResult result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kFailed);
  CHECK(result.diagnosis.find("Empty output file") != std::string::npos);
  CHECK(result.diagnosis.find("/w/x_60.err") != std::string::npos);
  CHECK(result.diagnosis.find("pyxis: failed to import") != std::string::npos);
}
