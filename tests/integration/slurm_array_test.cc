// `run --cases` with TRTLLM_RUN_SLURM_ARRAYS=1 on the real test cluster: cases of one
// shape are tasks of ONE job array, each task running its own case's script and judged
// through the array's records; a case of another shape is a plain job.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

rapidjson::Document ReadCombined(const std::string& repo) {
  std::string found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(repo + "/work_dirs", error)) {
    if (entry.path().filename().string().rfind("cases_", 0) == 0) found = entry.path().string();
  }
  return ReadResultJson(found);
}

std::vector<std::string> ArrayArgs(const std::string& repo) {
  return {"run",
          "--cases",
          repo + "/cases.yaml",
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
          "--kill-grace",
          "5"};
}

// `text` as a YAML single-quoted scalar.
std::string YamlQuoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

TEST_CASE(
    "run --cases with arrays: 4 same-shape cases are one array of 4 tasks and the odd "
    "one a plain job and every verdict is right",
    "[slurm][cli][multi][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array");
  const std::string marker = UniqueMarker("arr");
  // A name with shell metacharacters: it must reach neither a shell nor sbatch unquoted.
  const std::string odd_name = marker + "_$(touch pwned1) `touch pwned2`;x'\"";
  std::map<std::string, std::string> expected = {{marker + "_pass1", "PASSED"},
                                                 {marker + "_pass2", "PASSED"},
                                                 {odd_name, "FAILED"},
                                                 {marker + "_hang", "TIMEOUT"},
                                                 {marker + "_other", "PASSED"}};
  WriteTextFile(repo.path() + "/cases.yaml",
                "cases:\n"
                "  - {name: " +
                    marker + "_pass1, model_name: " + marker +
                    "_p1, custom_cmd: 'echo ok one'}\n"
                    "  - {name: " +
                    marker + "_pass2, model_name: " + marker +
                    "_p2, custom_cmd: 'echo ok two'}\n"
                    "  - {name: " +
                    YamlQuoted(odd_name) + ", model_name: " + marker +
                    "_f, custom_cmd: 'echo failing; exit 3'}\n"
                    "  - {name: " +
                    marker + "_hang, model_name: " + marker +
                    "_t, custom_cmd: 'echo started; sleep 300', monitor_timeout: 6s}\n"
                    "  - {name: " +
                    marker + "_other, model_name: " + marker +
                    "_o, custom_cmd: 'echo other shape', time_limit: '7'}\n");
  CliOptions options;
  options.args = ArrayArgs(repo.path());
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.cwd = repo.path();
  options.timeout_seconds = 240;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code != 0);
  CHECK(run.exit_code != 2);

  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 5);
  std::set<std::string> arrays;
  std::string plain;
  int tasks = 0;
  for (const auto& item : combined["cases"].GetArray()) {
    const std::string name = Str(item, "name");
    INFO(name + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == expected[name]);
    const std::string id = Str(item, "job_id");
    const std::string work_dir = Str(item, "work_dir");
    CHECK(WaitForFileText(work_dir + "/slurm_job_id", 1) == id);
    CHECK(JobActiveStates(id).empty());
    if (name == marker + "_other") {
      plain = id;
      CHECK(id.find('_') == std::string::npos);
      continue;
    }
    REQUIRE(id.find('_') != std::string::npos);
    arrays.insert(id.substr(0, id.find('_')));
    ++tasks;
    // Each task ran its own case's script and wrote where that case's verdict looked.
    const std::string log = ReadTextFile(Str(item["result"], "log_file"));
    if (name == marker + "_pass1") CHECK(log.find("ok one") != std::string::npos);
    if (name == marker + "_pass2") CHECK(log.find("ok two") != std::string::npos);
    if (name == odd_name) CHECK(log.find("failing") != std::string::npos);
  }
  CHECK(tasks == 4);
  REQUIRE(arrays.size() == 1);
  CHECK(!plain.empty());
  const std::string array_id = *arrays.begin();
  // Accounting shows one array job with 4 task rows (ARRAY_0 ...; slurmdbd may keep the
  // last task under the array's own row, ARRAY_[1-3%32]).
  std::string listed;
  int rows = 0;
  for (int tries = 0; tries < 20 && rows < 4; ++tries) {
    if (tries > 0) Shell("sleep 0.5");
    listed = Shell("sacct -n -X -P -j " + array_id + " -o JobID");
    rows = 0;
    for (std::size_t at = 0; (at = listed.find(array_id + "_", at)) != std::string::npos; ++at) {
      ++rows;
    }
  }
  INFO(listed);
  CHECK(rows == 4);
  CHECK(listed.find(array_id + "_0\n") != std::string::npos);
  // Two submissions: the array and the odd one.
  REQUIRE(combined["sessions"].Size() == 1);
  CHECK(Str(combined["sessions"][0]["stats"], "submits") == "2");
  CHECK(Str(combined["sessions"][0]["stats"], "arrays") == "1");
  // No shell ever ran the name's metacharacters.
  CHECK(Shell("find " + trtllm_run::ShellQuote(repo.path()) + " -name 'pwned*' | wc -l") == "0\n");
}

TEST_CASE("run --cases with arrays: scancel of one case's task cancels that case alone",
          "[slurm][cli][multi][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_cancel");
  WriteTextFile(repo.path() + "/cases.yaml",
                "cases:\n"
                "  - {name: a, model_name: ca, custom_cmd: 'echo a; sleep $((600 + 71))'}\n"
                "  - {name: b, model_name: cb, custom_cmd: 'echo b; sleep 8'}\n");
  CliOptions options;
  options.args = ArrayArgs(repo.path());
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.timeout_seconds = 180;
  // Cancel case a's work dir (its task) from outside once it runs.
  // Cancel case a's task (ARRAY_0, from its work dir) with scancel once it runs.
  const std::string cancel_log = repo.path() + "/cancel.log";
  const std::string canceller =
      "(for i in $(seq 240); do d=$(ls -d " + trtllm_run::ShellQuote(repo.path()) +
      "/work_dirs/ca_* 2>/dev/null | head -1); if [ -s \"$d/slurm_job_id\" ] && "
      "pgrep -f 'sleep 67[1]' >/dev/null; then id=$(cat \"$d/slurm_job_id\"); echo $id; "
      "scancel -- \"$id\"; exit 0; fi; sleep 0.5; done) </dev/null >" +
      cancel_log + " 2>&1 &";
  Shell(canceller);
  CliRun run = RunCli(options);
  INFO(run.Describe());
  INFO("cancelled: " + ReadTextFile(cancel_log));
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  std::map<std::string, std::string> status;
  for (const auto& item : combined["cases"].GetArray()) {
    status[Str(item, "name")] = Str(item, "status");
    CHECK(Str(item, "job_id").find('_') != std::string::npos);
  }
  CHECK(status["a"] == "CANCELLED");
  CHECK(status["b"] == "PASSED");
  CHECK(ReadTextFile(cancel_log).find("_0") != std::string::npos);
  CHECK(WaitNoProcessWithMarker("sleep 671", 10));
}
