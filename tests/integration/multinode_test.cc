// Two-node jobs on the real test cluster trtllm-test (tests/services/slurm.sh): partition
// `multi` holds `localhost` and `gpunode2`, two slurmds on this host with 2 fake GPUs
// each, so one srun runs its tasks on both and each task sees its own SLURMD_NODENAME.
//   - perf-sanity through the CLI: the stand-in submit.py sizes a config of 4 GPUs at 2 per
//     node to 2 nodes, and its launch script's srun runs one pytest per rank across both;
//     the verdict is PASSED with output of both nodes in the log, FAILED naming the node
//     and rank that failed, HANG_DETECTED for a hang line printed on one node only;
//   - the same in persistent mode (--persistent-mode true): a held 2-node allocation whose
//     steps run across both nodes, listed and released with `trtllm-run release`;
//   - a held allocation whose salloc pends for a reason waiting cannot clear ends at once
//     (ERROR naming the reason and the fix), and --max-pending bounds the salloc wait.
// The test cluster has no pyxis and no PMIx library: the repo copy's submit.py leaves its
// srun without container and --mpi flags.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

const char kTestId[] = "aggr-two_node_test-tp4";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Field(const rapidjson::Document& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "";
}

std::string Detail(const rapidjson::Document& doc, const char* key) {
  if (!doc.IsObject() || !doc.HasMember("details") || !doc["details"].IsObject()) return "";
  const auto& details = doc["details"];
  return details.HasMember(key) && details[key].IsString() ? details[key].GetString() : "";
}

std::string Fixture(const std::string& name) {
  return (fs::path(SourceDir()) / "tests" / "fixtures" / name).lexically_normal().string();
}

// What each rank's pytest does besides printing where it runs.
enum class RankBehaviour { kPass, kFailRank3, kHangOnGpunode2 };

// A writable copy of the fake TensorRT-LLM tree, set up for a 2-node perf-sanity run on
// this host: a perf config of tp 4 at 2 GPUs per node, a test module whose test_e2e
// prints its rank and node (pytest -s from the defs' pytest.ini), and a submit.py whose
// srun has no pyxis or --mpi flags.
struct TwoNodeRepo {
  // `parent`: where the copy goes ("": a directory of its own).
  explicit TwoNodeRepo(RankBehaviour behaviour, const std::string& parent = "")
      : dir("trtllm_multinode") {
    path = (parent.empty() ? dir.path() : parent + "/" + fs::path(dir.path()).filename().string()) +
           "/TensorRT-LLM";
    fs::create_directories(fs::path(path).parent_path());
    fs::copy(Fixture("trtllm"), path, fs::copy_options::recursive);
    WriteTextFile(path + "/tests/scripts/perf-sanity/aggregated/two_node_test.yaml",
                  "hardware:\n"
                  "  gpus_per_node: 2\n"
                  "server_configs:\n"
                  "  - name: \"tp4\"\n"
                  "    model_name: \"two_node_model\"\n"
                  "    tensor_parallel_size: 4\n");
    const std::string defs = path + "/tests/integration/defs";
    WriteTextFile(defs + "/pytest.ini", "[pytest]\naddopts = -s -p no:cacheprovider\n");
    // The repo's conftest.py takes submit.py's --output-dir.
    WriteTextFile(defs + "/conftest.py",
                  "def pytest_addoption(parser):\n"
                  "    parser.addoption('--output-dir', default=None)\n");
    std::string module =
        "import os\n"
        "import time\n"
        "import pytest\n\n"
        "NODE = os.environ.get('SLURMD_NODENAME', '?')\n"
        "RANK = os.environ.get('SLURM_PROCID', '?')\n\n\n"
        "@pytest.mark.parametrize('perf_sanity_test_case', ['" +
        std::string(kTestId) +
        "'])\n"
        "def test_e2e(perf_sanity_test_case):\n"
        "    print(f'\\nperf rank {RANK} on node {NODE}', flush=True)\n";
    if (behaviour == RankBehaviour::kFailRank3) {
      module += "    assert RANK != '3', f'rank {RANK} on {NODE} lost its peer'\n";
    } else if (behaviour == RankBehaviour::kHangOnGpunode2) {
      // The hang line waits (60 s at most) until a localhost rank has printed its line:
      // the hang stops the step at once, and the tests check both nodes' lines in the log.
      module +=
          "    seen = os.path.join(os.path.dirname(os.path.abspath(__file__)), '.localhost_rank')\n"
          "    if NODE == 'localhost':\n"
          "        open(seen, 'w').close()\n"
          "    if NODE == 'gpunode2' and os.environ.get('SLURM_LOCALID') == '0':\n"
          "        deadline = time.time() + 60\n"
          "        while not os.path.exists(seen) and time.time() < deadline:\n"
          "            time.sleep(0.1)\n"
          "        time.sleep(1)\n"
          "        print(f'hang detected on {NODE}: no progress for 300 s', flush=True)\n"
          "        time.sleep(600)\n";
    }
    WriteTextFile(defs + "/perf/test_perf_sanity.py", module);
    // No pyxis and no PMIx library on this host: srun gets neither flags.
    EditSubmitPy("    pytest_command = (", "    srun_args = []\n    pytest_command = (");
  }
  void EditSubmitPy(const std::string& from, const std::string& to) const {
    const std::string file = path + "/jenkins/scripts/perf/local/submit.py";
    std::string text = ReadTextFile(file);
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    WriteTextFile(file, text.replace(at, from.size(), to));
  }
  TempDir dir;
  std::string path;
};

CliOptions PerfRun(const TwoNodeRepo& repo, const std::vector<std::string>& extra) {
  CliOptions options;
  options.args = {"run",
                  "--repo-root",
                  repo.path,
                  "--scenario",
                  "local_slurm",
                  "--partition",
                  "multi",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--llm-models-root",
                  "/models",
                  "--models-path",
                  repo.path,
                  "--monitor-timeout",
                  "3m",
                  "--test-cmd",
                  "pytest perf/test_perf_sanity.py 'test_e2e[" + std::string(kTestId) + "]'"};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.cwd = repo.path;
  options.timeout_seconds = 240;
  return options;
}

struct Outcome {
  CliRun run;
  std::string work_dir;
  rapidjson::Document result;
  std::string log;
};

Outcome RunPerf(const TwoNodeRepo& repo, const CliOptions& options) {
  Outcome o;
  o.run = RunCli(options);
  o.work_dir = FindSingleWorkDir(repo.path);
  if (!o.work_dir.empty()) o.result = ReadResultJson(o.work_dir);
  std::string log = Field(o.result, "log_file");
  if (!log.empty()) o.log = ReadTextFile(log);
  return o;
}

std::string Describe(const Outcome& o) { return o.run.Describe() + "\n--- log\n" + o.log; }

// The node rank `rank` printed that it ran on ("" when it printed nothing).
std::string NodeOfRank(const std::string& log, int rank) {
  const std::string r = std::to_string(rank);
  const std::string line = r + ": perf rank " + r + " on node ";
  size_t at = log.find(line);
  if (at == std::string::npos) return "";
  at += line.size();
  return log.substr(at, log.find('\n', at) - at);
}

// Every rank printed where it ran (srun -l labels), two ranks on each node.
void CheckBothNodesSeen(const std::string& log) {
  int on_localhost = 0, on_gpunode2 = 0;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string node = NodeOfRank(log, rank);
    INFO("rank " << rank << " on '" << node << "'");
    CHECK((node == "localhost" || node == "gpunode2"));
    on_localhost += node == "localhost";
    on_gpunode2 += node == "gpunode2";
  }
  CHECK(on_localhost == 2);
  CHECK(on_gpunode2 == 2);
}

// Cancels, at the end of the scope, the held allocations and requests (job name
// trtllm-run-held) whose working directory lies under `dir`: a failing check must not
// leave them holding or queueing for the test cluster's nodes.
class HeldJobsCleanup {
 public:
  explicit HeldJobsCleanup(std::string dir) : dir_(std::move(dir)) {}
  ~HeldJobsCleanup() {
    Shell("squeue -h -n trtllm-run-held -o '%i %Z' | awk -v d='" + dir_ +
          "' 'index($2, d) == 1 {print $1}' | xargs -r scancel");
  }

 private:
  std::string dir_;
};

}  // namespace

TEST_CASE("multinode: partition multi runs one srun across localhost and gpunode2",
          "[slurm][multinode]") {
  EnsureSlurm();
  int status = 0;
  // --time: a job without one would wait for any reservation ahead on the nodes.
  const std::string srun = "timeout 150 srun -p multi -N2 --ntasks-per-node=1 --time=1 -l";
  std::string out = Shell(srun + " bash -c 'echo $SLURMD_NODENAME' 2>&1", &status);
  INFO(out);
  CHECK(status == 0);
  // Which node gets rank 0 is Slurm's choice; each gets one of the two.
  CHECK((Contains(out, "0: localhost\n") || Contains(out, "1: localhost\n")));
  CHECK((Contains(out, "0: gpunode2\n") || Contains(out, "1: gpunode2\n")));
  CHECK(Shell("sinfo -h -p multi -N -o '%N %G'") == "gpunode2 gpu:2\nlocalhost gpu:2\n");
}

TEST_CASE("multinode: a 2-node perf-sanity job is PASSED with both nodes' output followed",
          "[slurm][multinode][perf]") {
  EnsureSlurm();
  TwoNodeRepo repo(RankBehaviour::kPass);
  Outcome o = RunPerf(repo, PerfRun(repo, {}));
  INFO(Describe(o));
  REQUIRE_FALSE(o.run.timed_out);
  CHECK(o.run.exit_code == 0);
  CHECK(Field(o.result, "status") == "PASSED");
  CHECK(Contains(ReadTextFile(o.work_dir + "/slurm_launch.sh"), "#SBATCH --nodes=2\n"));
  CheckBothNodesSeen(o.log);
  CHECK(Detail(o.result, "nodes") == "gpunode2,localhost");
  // Followed while it ran: the terminal got both nodes' lines, not only the file.
  const std::string terminal = o.run.stdout_text + o.run.stderr_text;
  CHECK(Contains(terminal, "on node gpunode2"));
  CHECK(Contains(terminal, "on node localhost"));
}

TEST_CASE("multinode: a failing rank on one node is FAILED naming the node and the rank",
          "[slurm][multinode][perf]") {
  EnsureSlurm();
  TwoNodeRepo repo(RankBehaviour::kFailRank3);
  Outcome o = RunPerf(repo, PerfRun(repo, {}));
  INFO(Describe(o));
  REQUIRE_FALSE(o.run.timed_out);
  CHECK(o.run.exit_code == 1);
  CHECK(Field(o.result, "status") == "FAILED");
  CheckBothNodesSeen(o.log);
  std::string reason = Field(o.result, "reason");
  const std::string node = NodeOfRank(o.log, 3);
  REQUIRE(!node.empty());
  CHECK(Contains(reason, node));
  CHECK(Contains(reason, "task 3"));
}

TEST_CASE("multinode: a hang line on one node is HANG_DETECTED", "[slurm][multinode][perf]") {
  EnsureSlurm();
  TwoNodeRepo repo(RankBehaviour::kHangOnGpunode2);
  Outcome o = RunPerf(repo, PerfRun(repo, {}));
  INFO(Describe(o));
  REQUIRE_FALSE(o.run.timed_out);
  CHECK(o.run.seconds < 120);
  CHECK(Field(o.result, "status") == "HANG_DETECTED");
  CHECK(Contains(Field(o.result, "reason"), "hang detected on gpunode2"));
  CHECK(Contains(o.log, "on node localhost"));
  std::string job_id = Detail(o.result, "job_id");
  REQUIRE(!job_id.empty());
  CHECK(JobActiveStates(job_id).empty());
}

TEST_CASE(
    "multinode: persistent mode holds a 2-node allocation whose steps run on both nodes, "
    "release ends it",
    "[slurm][multinode][perf]") {
  EnsureSlurm();
  TempDir state("trtllm_multinode_state");  // a private allocation state dir
  TempDir repos("trtllm_multinode_held");
  HeldJobsCleanup cleanup(repos.path());
  auto held_run = [&](RankBehaviour behaviour, Outcome* o) {
    TwoNodeRepo repo(behaviour, repos.path());
    CliOptions options = PerfRun(repo, {"--persistent-mode", "true", "--alloc-time-limit", "15"});
    options.env = {{"XDG_RUNTIME_DIR", state.path()}};
    *o = RunPerf(repo, options);
  };

  Outcome passed;
  held_run(RankBehaviour::kPass, &passed);
  {
    INFO(Describe(passed));
    REQUIRE_FALSE(passed.run.timed_out);
    CHECK(passed.run.exit_code == 0);
    CHECK(Field(passed.result, "status") == "PASSED");
    CheckBothNodesSeen(passed.log);
    CHECK(Detail(passed.result, "allocation_reused") == "false");
  }
  const std::string allocation = Detail(passed.result, "allocation_id");
  REQUIRE(!allocation.empty());
  CHECK(JobState(allocation) == "RUNNING");
  CHECK(Shell("squeue -h -j " + allocation + " -o %N") == "gpunode2,localhost\n");

  Outcome failed;
  held_run(RankBehaviour::kFailRank3, &failed);
  {
    INFO(Describe(failed));
    REQUIRE_FALSE(failed.run.timed_out);
    CHECK(failed.run.exit_code == 1);
    CHECK(Field(failed.result, "status") == "FAILED");
    CHECK(Detail(failed.result, "allocation_id") == allocation);
    CheckBothNodesSeen(failed.log);
    std::string reason = Field(failed.result, "reason");
    const std::string node = NodeOfRank(failed.log, 3);
    REQUIRE(!node.empty());
    CHECK(Contains(reason, node));
    CHECK(Contains(reason, "task 3"));
  }

  Outcome hung;
  held_run(RankBehaviour::kHangOnGpunode2, &hung);
  {
    INFO(Describe(hung));
    REQUIRE_FALSE(hung.run.timed_out);
    CHECK(hung.run.seconds < 120);
    CHECK(Field(hung.result, "status") == "HANG_DETECTED");
    CHECK(Detail(hung.result, "allocation_id") == allocation);
    CHECK(Contains(Field(hung.result, "reason"), "hang detected on gpunode2"));
    CHECK(Contains(hung.log, "on node localhost"));
  }
  // The hung step is gone; the allocation is still held for the next run.
  CHECK(Shell("squeue -h -s -j " + allocation + " -o %i | grep -v '\\.extern$' || true") == "");
  CHECK(JobState(allocation) == "RUNNING");

  CliOptions list;
  list.args = {"release", "--list"};
  list.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CliRun listed = RunCli(list);
  INFO(listed.Describe());
  CHECK(Contains(listed.stdout_text, "allocation " + allocation));
  CliOptions release;
  release.args = {"release"};
  release.env = list.env;
  CliRun released = RunCli(release);
  INFO(released.Describe());
  CHECK(released.exit_code == 0);
  CHECK(Contains(released.stdout_text, "released allocation " + allocation));
  CHECK(JobActiveStates(allocation).empty());
}

namespace {

// This cluster's slurm_env (`trtllm-run env`) with the down partition `maint` shown as
// up: planning accepts --partition maint, and the allocation request then pends on
// PartitionDown (the planner refuses a partition it knows is down).
std::string SlurmEnvWithMaintUp(const std::string& dir) {
  const std::string path = dir + "/slurm_env_maint_up.json";
  CliRun probed = RunCli({"env", "--output", path});
  INFO(probed.Describe());
  REQUIRE(probed.exit_code == 0);
  std::string text = ReadTextFile(path);
  const std::string from = "\"name\": \"maint\",\n      \"state\": \"down\"";
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  WriteTextFile(path,
                text.replace(at, from.size(), "\"name\": \"maint\",\n      \"state\": \"up\""));
  return path;
}

CliOptions HeldCustomRun(const std::string& repo, const std::string& state,
                         std::vector<std::string> extra) {
  CliOptions options;
  options.args = {"run",
                  "--repo-root",
                  repo,
                  "--scenario",
                  "local_slurm",
                  "--skip-install",
                  "true",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--required-devices",
                  "0",
                  "--persistent-mode",
                  "true",
                  "--monitor-timeout",
                  "10m",
                  "--custom-cmd",
                  "echo never runs"};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.env = {{"XDG_RUNTIME_DIR", state}};
  options.cwd = repo;
  options.timeout_seconds = 90;
  return options;
}

// A reservation on localhost that starts in 45 days (reason Reservation, which waiting
// clears), deleted at the end of the scope (after the jobs waiting for it are cancelled:
// Slurm keeps a reservation that jobs wait for). OVERLAP: other tests' reservations on
// the node do not refuse it.
class FutureReservation {
 public:
  FutureReservation() : name_("trtllm_held_pending_" + std::to_string(::getpid())) {
    int status = 0;
    std::string out =
        Shell("scontrol create reservation ReservationName=" + name_ +
                  " StartTime=now+45days Duration=10 Users=root Nodes=localhost Flags=OVERLAP 2>&1",
              &status);
    INFO(out);
    REQUIRE(status == 0);
  }
  ~FutureReservation() { Shell("scontrol delete ReservationName=" + name_ + " 2>&1"); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace

TEST_CASE(
    "multinode: a held allocation pending on a down partition ends at once, ERROR naming "
    "PartitionDown and the fix",
    "[slurm][multinode][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_held_pending");
  TempDir state("trtllm_held_pending_state");
  HeldJobsCleanup cleanup(repo.path());
  CliRun run = RunCli(HeldCustomRun(
      repo.path(), state.path(),
      {"--partition", "maint", "--slurm-env-file", SlurmEnvWithMaintUp(repo.path())}));
  INFO(run.Describe());
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == 3);
  CHECK(run.seconds < 60);  // not the 10 minutes of the monitor timeout
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  std::string reason = Field(result, "reason");
  INFO(reason);
  CHECK(Field(result, "status") == "ERROR");
  CHECK(Contains(reason,
                 "was pending with reason PartitionDown (its partition is down), which "
                 "waiting cannot clear; it was cancelled with scancel and left the queue"));
  CHECK(Contains(Field(result, "diagnosis"),
                 "The job never started: Slurm kept it pending with reason PartitionDown (its "
                 "partition is down), which waiting cannot clear. Fix: give a --partition that "
                 "is up"));
  std::string request = Detail(result, "allocation_request_id");
  REQUIRE(!request.empty());
  CHECK(Contains(reason, "job " + request));
  CHECK(JobActiveStates(request).empty());
  // Nothing is held: the request never became an allocation.
  CliOptions list;
  list.args = {"release", "--list"};
  list.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CHECK_FALSE(Contains(RunCli(list).stdout_text, "allocation "));
}

TEST_CASE(
    "multinode: --max-pending bounds the salloc wait of a held allocation: ERROR naming "
    "the reason",
    "[slurm][multinode][cli]") {
  EnsureSlurm();
  FutureReservation reservation;
  TempDir repo("trtllm_held_pending");
  TempDir state("trtllm_held_pending_state");
  HeldJobsCleanup cleanup(repo.path());
  CliOptions options =
      HeldCustomRun(repo.path(), state.path(), {"--partition", "batch", "--max-pending", "5s"});
  options.env.push_back({"SALLOC_RESERVATION", reservation.name()});
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == 3);
  CHECK(run.seconds >= 5);
  CHECK(run.seconds < 60);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  std::string reason = Field(result, "reason");
  INFO(reason);
  CHECK(Field(result, "status") == "ERROR");
  CHECK(reason.rfind("still pending after 5s: Reservation; the held allocation request, job ", 0) ==
        0);
  CHECK(Contains(Field(result, "diagnosis"),
                 "The job never started: Slurm kept it pending with reason Reservation until "
                 "--max-pending ran out"));
  std::string request = Detail(result, "allocation_request_id");
  REQUIRE(!request.empty());
  CHECK(JobActiveStates(request).empty());
}
