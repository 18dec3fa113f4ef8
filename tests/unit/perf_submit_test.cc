// submit.py runs with stand-ins for the Slurm client tools that answer from the slurm_env
// being planned against (never from this host's Slurm), and the launch script it writes
// must ask sbatch for what the plan says.
#include <stdlib.h>
#include <unistd.h>

#include "plan_test_support.h"
#include "slurm/render/perf_submit.h"

using namespace plan_test;
using trtllm_run::internal::CheckLaunchSizing;
using trtllm_run::internal::LaunchSizing;
using trtllm_run::internal::PerfSubmitTarget;
using trtllm_run::internal::ReadLaunchSizing;
using trtllm_run::internal::SlurmToolNames;
using trtllm_run::internal::SubmitTimeoutSeconds;
using trtllm_run::internal::WriteSlurmToolStandIns;

namespace {

// Runs one stand-in (argv[0] a tool name) with an empty PATH, so nothing but the
// stand-in itself can answer.
CommandOutput RunTool(const std::string& dir, std::vector<std::string> argv) {
  argv[0] = dir + "/" + argv[0];
  argv.insert(argv.begin(), {"env", "-i", "PATH=/nonexistent"});
  Result<CommandOutput> out = MakeLocalScenario()->Run(argv, "");
  REQUIRE(out.ok());
  return out.value();
}

PerfSubmitTarget Target(int nodes, int per_node, const std::string& gres,
                        const std::string& partition_gres) {
  PerfSubmitTarget target;
  target.params.partition = "small";
  target.params.nodes = nodes;
  target.params.ntasks_per_node = per_node;
  target.params.ntasks = nodes * per_node;
  target.params.gres = gres;
  target.partition.name = "small";
  target.partition.gres = partition_gres;
  target.cluster = "cluster_a";
  return target;
}

}  // namespace

TEST_CASE("sinfo stand-in answers from slurm_env, in sinfo's formats", "[perf][submit]") {
  TempDir dir;
  REQUIRE(WriteSlurmToolStandIns(dir.path(), LoadEnv("cluster_a")).ok());
  for (const std::string& tool : SlurmToolNames()) {
    CHECK(::access((dir / tool).c_str(), X_OK) == 0);
  }

  CommandOutput gres = RunTool(dir.path(), {"sinfo", "-p", "small", "-h", "-o", "%G"});
  CHECK(gres.exit_code == 0);
  CHECK(gres.stdout_text == "gpu:4(IDX:0-3)\n");
  CHECK(
      RunTool(dir.path(), {"sinfo", "--partition=cpu", "--noheader", "--format=%G"}).stdout_text ==
      "(null)\n");
  CHECK(RunTool(dir.path(), {"sinfo", "-pbatch,grace", "-h", "-o%R=%G"}).stdout_text ==
        "batch=gpu:8\ngrace=gpu:4\n");
  // The default partition carries sinfo's '*' in %P only; widths are accepted.
  CHECK(RunTool(dir.path(), {"sinfo", "-h", "-o", "%P|%.5a|%l|%-4D"}).stdout_text ==
        "batch*|up|08:00:00|32\nsmall|up|04:00:00|4\ngrace|up|04:00:00|8\n"
        "cpu|up|01:00:00|2\nmaint|down|01:00:00|1\n");
  CHECK(RunTool(dir.path(), {"sinfo", "-o", "%R %G", "-p", "cpu"}).stdout_text ==
        "PARTITION GRES\ncpu (null)\n");
  // A partition the cluster does not have: nothing, as sinfo prints.
  CommandOutput none = RunTool(dir.path(), {"sinfo", "-p", "gpu9", "-h", "-o", "%G"});
  CHECK(none.exit_code == 0);
  CHECK(none.stdout_text.empty());

  SECTION("what slurm_env does not know fails at once and is logged") {
    CommandOutput nodes = RunTool(dir.path(), {"sinfo", "-h", "-o", "%N"});
    CHECK(nodes.exit_code == 1);
    CHECK_THAT(nodes.stderr_text, Catch::Contains("cluster cluster_a"));
    CHECK_THAT(nodes.stderr_text, Catch::Contains("format field %N"));
    CHECK(RunTool(dir.path(), {"sinfo", "-N"}).exit_code == 1);
    CHECK(RunTool(dir.path(), {"sinfo"}).exit_code == 1);
    CommandOutput squeue = RunTool(dir.path(), {"squeue", "-u", "alice"});
    CHECK(squeue.exit_code == 1);
    CHECK_THAT(squeue.stderr_text, Catch::Contains("squeue is not available"));
    CHECK(RunTool(dir.path(), {"sbatch", "x.sh"}).exit_code == 1);
    CHECK(ReadText(dir / "unanswered.log") ==
          "sinfo -h -o %N (format field %N is not known from slurm_env)\n"
          "sinfo -N (option '-N' is not known from slurm_env)\n"
          "sinfo  (only -o/--format output is known from slurm_env)\n"
          "squeue -u alice (squeue is not available while trtllm-run plans (slurm_env holds "
          "the cluster's probed facts only))\n"
          "sbatch x.sh (sbatch is not available while trtllm-run plans (slurm_env holds the "
          "cluster's probed facts only))\n");
    CHECK_THAT(ReadText(dir / "queries.log"), Catch::StartsWith("sinfo -p small -h -o %G\n"));
  }
}

TEST_CASE("scontrol stand-in: the cluster name and partitions of slurm_env", "[perf][submit]") {
  TempDir dir;
  SlurmEnv env = LoadEnv("cluster_a");
  REQUIRE(WriteSlurmToolStandIns(dir.path(), env).ok());
  CommandOutput config = RunTool(dir.path(), {"scontrol", "show", "config"});
  CHECK(config.exit_code == 0);
  CHECK_THAT(config.stdout_text, Catch::Contains("\nClusterName             = cluster_a\n"));
  CHECK(RunTool(dir.path(), {"scontrol", "-o", "show", "partition", "batch"}).stdout_text ==
        "PartitionName=batch Default=YES State=UP MaxTime=08:00:00 TotalNodes=32\n");
  CommandOutput missing = RunTool(dir.path(), {"scontrol", "show", "partition", "gpu9"});
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.stderr_text, Catch::Contains("Partition gpu9 not found"));
  CHECK(RunTool(dir.path(), {"scontrol", "show", "node", "n1"}).exit_code == 1);

  SECTION("without a cluster name, show config fails instead of guessing") {
    env.cluster_name.reset();
    TempDir other;
    REQUIRE(WriteSlurmToolStandIns(other.path(), env).ok());
    CommandOutput unnamed = RunTool(other.path(), {"scontrol", "show", "config"});
    CHECK(unnamed.exit_code == 1);
    CHECK_THAT(unnamed.stderr_text, Catch::Contains("slurm_env has no cluster_name"));
  }
}

TEST_CASE("a launch script's #SBATCH sizing, as sbatch reads it", "[perf][submit]") {
  LaunchSizing sizing = ReadLaunchSizing(
      "#!/bin/bash\n"
      "#SBATCH -N 2\n"
      "# a comment\n"
      "\n"
      "#SBATCH --ntasks 16 --ntasks-per-node=8  # per node\n"
      "#SBATCH --gres=gpu:a100:8 --gpus-per-node=8\n"
      "export X=1\n"
      "#SBATCH --nodes=9\n");
  CHECK(sizing.nodes == std::optional<std::string>("2"));
  CHECK(sizing.ntasks == std::optional<std::string>("16"));
  CHECK(sizing.ntasks_per_node == std::optional<std::string>("8"));
  CHECK(sizing.gres == std::optional<std::string>("gpu:a100:8"));
  CHECK(sizing.gpus_per_node == std::optional<std::string>("8"));
  CHECK_FALSE(ReadLaunchSizing("#!/bin/bash\n#SBATCH -n4\n").nodes);
  CHECK(ReadLaunchSizing("#!/bin/bash\n#SBATCH -n4\n").ntasks == std::optional<std::string>("4"));
}

TEST_CASE("a launch script that disagrees with the plan names both values", "[perf][submit]") {
  const std::string path = "/w/slurm_launch.sh";
  const PerfSubmitTarget target = Target(2, 4, "gpu:4", "gpu:4(IDX:0-3)");
  auto script = [](const std::string& lines) { return ReadLaunchSizing("#!/bin/bash\n" + lines); };
  CHECK(CheckLaunchSizing(script("#SBATCH --nodes=2\n#SBATCH --ntasks=8\n"
                                 "#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-node=4\n"
                                 "#SBATCH --gres=gpu:4\n"),
                          target, path)
            .ok());
  CHECK(CheckLaunchSizing(script("#SBATCH --nodes=2 --ntasks-per-node=4 --gres=gpu:h100:4\n"),
                          target, path)
            .ok());

  struct Bad {
    std::string lines;
    std::vector<std::string> named;
  };
  const std::vector<Bad> cases = {
      {"#SBATCH --nodes=3 --ntasks-per-node=4 --gres=gpu:4\n",
       {"#SBATCH --nodes = 3", "has --nodes = 2"}},
      {"#SBATCH --ntasks-per-node=4 --gres=gpu:4\n", {"--nodes = (no such line)"}},
      {"#SBATCH --nodes=2 --ntasks-per-node=8 --gres=gpu:4\n",
       {"--ntasks-per-node = 8", "has --ntasks-per-node = 4"}},
      {"#SBATCH --nodes=2 --ntasks=16 --ntasks-per-node=4 --gres=gpu:4\n",
       {"--ntasks = 16", "has --ntasks = 8"}},
      {"#SBATCH --nodes=2 --ntasks-per-node=4 --gpus-per-node=4\n",
       {"--gres = (no such line)", "has --gres = gpu:4 (the partition's gres is gpu:4(IDX:0-3))"}},
      {"#SBATCH --nodes=2 --ntasks-per-node=4 --gres=gpu:8\n", {"--gres = gpu:8", "gpu:4"}},
      {"#SBATCH --nodes=2 --ntasks-per-node=4 --gres=gpu:4 --gpus-per-node=2\n",
       {"--gpus-per-node = 2", "has --gpus-per-node = 4"}},
  };
  for (const Bad& bad : cases) {
    Status status = CheckLaunchSizing(script(bad.lines), target, path);
    INFO(bad.lines);
    REQUIRE_FALSE(status.ok());
    CHECK(status.code() == StatusCode::kInvalidInput);
    CHECK_THAT(status.message(), Catch::StartsWith(path + " (written by submit.py)"));
    CHECK_THAT(status.message(), Catch::Contains("partition small of cluster cluster_a"));
    for (const std::string& text : bad.named) CHECK_THAT(status.message(), Catch::Contains(text));
  }

  SECTION("a partition without GPU gres: no GPU request may be made") {
    const PerfSubmitTarget cpu = Target(1, 4, "", "(null)");
    CHECK(CheckLaunchSizing(script("#SBATCH --nodes=1 --ntasks-per-node=4\n"), cpu, path).ok());
    Status gres = CheckLaunchSizing(script("#SBATCH --nodes=1 --ntasks-per-node=4 --gres=gpu:4\n"),
                                    cpu, path);
    REQUIRE_FALSE(gres.ok());
    CHECK_THAT(gres.message(), Catch::Contains("--gres = gpu:4"));
    CHECK_THAT(gres.message(), Catch::Contains("has no --gres (the partition's gres is (null))"));
    Status gpus = CheckLaunchSizing(script("#SBATCH --nodes=1 --ntasks-per-node=4\n"
                                           "#SBATCH --gpus-per-node=4\n"),
                                    cpu, path);
    REQUIRE_FALSE(gpus.ok());
    CHECK_THAT(gpus.message(), Catch::Contains("--gpus-per-node = 4"));
  }
}

TEST_CASE("TRTLLM_RUN_SUBMIT_TIMEOUT bounds submit.py, bad values are named", "[perf][submit]") {
  const char* old = std::getenv("TRTLLM_RUN_SUBMIT_TIMEOUT");
  std::string saved = old ? old : "";
  ::unsetenv("TRTLLM_RUN_SUBMIT_TIMEOUT");
  CHECK(SubmitTimeoutSeconds().value() == 60);
  ::setenv("TRTLLM_RUN_SUBMIT_TIMEOUT", "7", 1);
  CHECK(SubmitTimeoutSeconds().value() == 7);
  for (const char* bad : {"0", "-3", "1.5", "abc", "999999"}) {
    ::setenv("TRTLLM_RUN_SUBMIT_TIMEOUT", bad, 1);
    Result<int> seconds = SubmitTimeoutSeconds();
    REQUIRE_FALSE(seconds.ok());
    CHECK_THAT(seconds.status().message(),
               Catch::Contains("TRTLLM_RUN_SUBMIT_TIMEOUT='" + std::string(bad) + "'"));
  }
  if (old) {
    ::setenv("TRTLLM_RUN_SUBMIT_TIMEOUT", saved.c_str(), 1);
  } else {
    ::unsetenv("TRTLLM_RUN_SUBMIT_TIMEOUT");
  }
}

TEST_CASE("ReplacePathPrefix maps whole path components only", "[perf][remote]") {
  using trtllm_run::internal::ReplacePathPrefix;
  const std::string from = "/home/u/TRT";
  const std::string to = "/lustre/bob/TRT";
  CHECK(ReplacePathPrefix("export a=/home/u/TRT\n", from, to) == "export a=/lustre/bob/TRT\n");
  CHECK(ReplacePathPrefix("x '/home/u/TRT/tests/a.yaml' y", from, to) ==
        "x '/lustre/bob/TRT/tests/a.yaml' y");
  CHECK(ReplacePathPrefix("--container-mounts=/home/u/TRT:/home/u/TRT,/m:/m", from, to) ==
        "--container-mounts=/lustre/bob/TRT:/lustre/bob/TRT,/m:/m");
  // Another directory that merely starts with the same text is left alone.
  CHECK(ReplacePathPrefix("/home/u/TRT-2/x /home/u/TRT.old /x/home/u/TRT", from, to) ==
        "/home/u/TRT-2/x /home/u/TRT.old /x/home/u/TRT");
  CHECK(ReplacePathPrefix("nothing here", from, to) == "nothing here");
}
