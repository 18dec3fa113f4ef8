// The Slurm probe's parsers and document, on outputs captured from real Slurm 22.05
// clusters (tests/fixtures/slurm, see capture.sh there), and its script run for real
// with bash (stand-in Slurm commands where the point is concurrency and counting).
#include "trtllm_run/slurm_probe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "trtllm_run/environment.h"
#include "trtllm_run/scenario.h"
#include "trtllm_run/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

std::string SlurmFixture(const std::string& name) {
  fs::path dir = fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "slurm";
  Result<std::string> text = ReadFile((dir / name).string());
  REQUIRE(text.ok());
  return text.value();
}

SlurmEnv EnvFromFixture(const std::string& name, const ProbeOptions& options = {}) {
  Result<ProbeOutput> output = ParseProbeStream(SlurmFixture(name), "@@fixture@@");
  REQUIRE(output.ok());
  return SlurmEnvFromProbe(output.value(), options);
}

bool HasError(const SlurmEnv& env, const std::string& needle) {
  for (const std::string& error : env.errors) {
    if (error.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("probe document of a user with accounts on a real cluster", "[slurm_probe]") {
  SlurmEnv env = EnvFromFixture("root.stream");
  CHECK(env.user == "root");
  // sacctmgr lists associations alphabetically; the default is the user's DefaultAccount.
  CHECK(env.accounts == std::vector<std::string>{"proj2", "research", "root"});
  REQUIRE(env.default_account);
  CHECK(*env.default_account == "research");
  REQUIRE(env.partitions.size() == 6);
  std::vector<std::string> names;
  for (const SlurmPartition& p : env.partitions) names.push_back(p.name);
  CHECK(names ==
        std::vector<std::string>{"maint", "restricted", "batch-backfill", "debug", "batch", "cpu"});
  const SlurmPartition* maint = env.FindPartition("maint");
  CHECK(maint->state == "down");
  CHECK_FALSE(maint->arch);  // down partitions are not probed
  CHECK(maint->gres == "(null)");
  const SlurmPartition* debug = env.FindPartition("debug");
  CHECK(debug->state == "up");
  CHECK(debug->time_limit == "2:00:00");
  CHECK(debug->nodes == "1");
  REQUIRE(debug->arch);
  CHECK(*debug->arch == "x86_64");  // 22.05's Arch= is not at the start of a line
  CHECK(debug->gres == "gpu:2");
  CHECK(debug->gpus_per_node == 2);
  CHECK(debug->requires_gres);
  const SlurmPartition* cpu = env.FindPartition("cpu");
  CHECK(cpu->gres == "(null)");
  CHECK_FALSE(cpu->gpus_per_node);
  CHECK_FALSE(cpu->requires_gres);
  CHECK(cpu->arch == std::optional<std::string>("x86_64"));
  // restricted rejects the default account; plain names beat batch-backfill; among the
  // plain ones (debug, batch, cpu) the one sinfo marks default wins.
  CHECK(env.default_partition == std::optional<std::string>("batch"));
  CHECK(env.pmix_available == std::vector<std::string>{"pmix", "pmix_v4"});
  CHECK(env.pmix_preferred == std::optional<std::string>("pmix_v4"));
  CHECK(env.errors.empty());
  CHECK(SlurmProbeExitStatus(env) == 0);
}

TEST_CASE("probe document of a user without association", "[slurm_probe]") {
  SlurmEnv env = EnvFromFixture("noassoc.stream");
  CHECK(env.user == "noassoc");
  CHECK(env.accounts.empty());
  CHECK_FALSE(env.default_account);
  CHECK(HasError(env, "no SLURM account associations for user noassoc"));
  // Every access check failed: the first listed partition that is up, with the error.
  CHECK(env.default_partition == std::optional<std::string>("restricted"));
  CHECK(HasError(env,
                 "partition access verification failed; falling back to first available "
                 "partition"));
  CHECK(env.partitions.size() == 6);
  CHECK(SlurmProbeExitStatus(env) == 2);
}

TEST_CASE("probe document of a cluster without accounting", "[slurm_probe]") {
  SlurmEnv env = EnvFromFixture("noacct.stream");
  CHECK(env.accounts.empty());
  CHECK_FALSE(env.default_account);
  // The errors say why the accounts are missing, in sacctmgr's words.
  CHECK(HasError(env,
                 "'sacctmgr show assoc' failed (exit 1): You are not running a supported "
                 "accounting_storage plugin"));
  CHECK(HasError(env, "no SLURM account associations for user root"));
  REQUIRE(env.partitions.size() == 1);
  CHECK(env.partitions[0].name == "batch");
  CHECK(env.partitions[0].arch == std::optional<std::string>("x86_64"));
  CHECK(env.default_partition == std::optional<std::string>("batch"));  // accepted
  CHECK(SlurmProbeExitStatus(env) == 2);
}

TEST_CASE("partition filter limits the hardware probe and reports unknown names", "[slurm_probe]") {
  ProbeOptions options;
  options.partitions = {"cpu", "nosuch"};
  SlurmEnv env = EnvFromFixture("root.stream", options);
  CHECK(env.partitions.size() == 6);  // every partition is listed
  CHECK(env.FindPartition("cpu")->arch == std::optional<std::string>("x86_64"));
  CHECK_FALSE(env.FindPartition("debug")->arch);
  CHECK(env.FindPartition("debug")->gres == "(null)");
  CHECK(HasError(env,
                 "partition 'nosuch' (partition filter) does not exist; partitions: maint, "
                 "restricted, batch-backfill, debug, batch, cpu"));
}

TEST_CASE("missing Slurm tools give the documented empty document", "[slurm_probe]") {
  ProbeOutput output;
  output.sections["user"].out = "alice";
  output.sections["missing"].out = " sacctmgr sinfo";
  SlurmEnv env = SlurmEnvFromProbe(output, {});
  CHECK(SlurmProbeExitStatus(env) == 1);
  CHECK(SlurmEnvToJson(env) ==
        "{\n"
        "  \"user\": \"alice\",\n"
        "  \"default_account\": null,\n"
        "  \"accounts\": [],\n"
        "  \"default_partition\": null,\n"
        "  \"partitions\": [],\n"
        "  \"pmix\": {\n"
        "    \"available\": [],\n"
        "    \"preferred\": null\n"
        "  },\n"
        "  \"errors\": [\n"
        "    \"SLURM client tools not found\"\n"
        "  ]\n"
        "}\n");
}

TEST_CASE("scontrol show node: one-line and multi-line formats agree", "[slurm_probe]") {
  Result<ProbeOutput> output = ParseProbeStream(SlurmFixture("root.stream"), "@@fixture@@");
  REQUIRE(output.ok());
  std::vector<NodeInfo> one_line = ParseScontrolNodes(output.value().Find("nodes")->out);
  std::vector<NodeInfo> multi_line =
      ParseScontrolNodes(SlurmFixture("scontrol_show_node_multiline.txt"));
  REQUIRE(one_line.size() == 2);
  REQUIRE(multi_line.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(one_line[i].name == multi_line[i].name);
    CHECK(one_line[i].arch == multi_line[i].arch);
    CHECK(one_line[i].partitions == multi_line[i].partitions);
  }
  CHECK(one_line[1].name == "localhost");
  CHECK(one_line[1].arch == "x86_64");
  CHECK(one_line[1].partitions ==
        std::vector<std::string>{"maint", "restricted", "batch-backfill", "debug", "batch"});
  // Arch on a continuation line, and a node that never registered.
  std::vector<NodeInfo> nodes = ParseScontrolNodes(
      "NodeName=a01 CoresPerSocket=4\n   Arch=aarch64 OS=Linux 5.14 #1 SMP\n   Partitions=gb\n"
      "NodeName=a02 Arch=(null) CoresPerSocket=4\n   Partitions=gb\n");
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].arch == "aarch64");
  CHECK(nodes[1].arch.empty());
}

TEST_CASE("sinfo partitions: default marker, duplicates, empty gres", "[slurm_probe]") {
  std::vector<SinfoPartition> parts = ParseSinfoPartitions(
      "gpu*|up|4:00:00|3|gpu:8\n"
      "gpu*|up|4:00:00|2|gpu:a100:8(S:0-1)\n"
      "cpu|drain|infinite|4|\n");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].name == "gpu");
  CHECK(parts[0].default_marked);
  CHECK(parts[0].nodes == 5);
  CHECK(parts[0].gres == "gpu:8");
  CHECK(parts[1].state == "drain");
  CHECK(parts[1].gres == "(null)");
  // The node counts of the gres-split lines add up to sinfo's per-partition count.
  std::vector<SinfoPartition> plain = ParseSinfoPartitions(SlurmFixture("sinfo_plain.txt"));
  Result<ProbeOutput> output = ParseProbeStream(SlurmFixture("root.stream"), "@@fixture@@");
  std::vector<SinfoPartition> with_gres = ParseSinfoPartitions(output.value().Find("sinfo")->out);
  REQUIRE(plain.size() == with_gres.size());
  for (size_t i = 0; i < plain.size(); ++i) CHECK(plain[i].nodes == with_gres[i].nodes);
}

TEST_CASE("gpus per node from gres strings", "[slurm_probe]") {
  CHECK(GpusPerNodeFromGres("gpu:4") == 4);
  CHECK(GpusPerNodeFromGres("gpu:4(IDX:0-3)") == 4);
  CHECK(GpusPerNodeFromGres("gpu:a100:8") == 8);
  CHECK(GpusPerNodeFromGres("gpu:h100:8(S:0-1)") == 8);
  CHECK(GpusPerNodeFromGres("nvme:1,gpu:4(S:0,1)") == 4);
  CHECK_FALSE(GpusPerNodeFromGres("(null)"));
  CHECK_FALSE(GpusPerNodeFromGres(""));
  CHECK_FALSE(GpusPerNodeFromGres("gpu:a100"));
  CHECK(GresRequiresGpu("gpu:2"));
  CHECK(GresRequiresGpu("nvme:1,gpu:4"));
  CHECK_FALSE(GresRequiresGpu("(null)"));
  CHECK_FALSE(GresRequiresGpu("gpumem:1"));
}

TEST_CASE("pmix plugins from srun --mpi=list", "[slurm_probe]") {
  // Slurm 22.05: the versions on one line after a label.
  std::vector<std::string> v22 = ParsePmixPlugins(
      "MPI plugin types are...\n\tpmix\n\tnone\n\tcray_shasta\n\tpmi2\n"
      "specific pmix plugin versions available: pmix_v4\n");
  CHECK(v22 == std::vector<std::string>{"pmix", "pmix_v4"});
  CHECK(PreferredPmix(v22) == std::optional<std::string>("pmix_v4"));
  // Older "srun: " lists and comma lists; numeric comparison of versions.
  std::vector<std::string> old = ParsePmixPlugins(
      "srun: MPI types are...\nsrun: none\nsrun: pmix_v3\nsrun: -pmix_v10,pmix_v9");
  CHECK(old == std::vector<std::string>{"pmix_v3", "pmix_v10", "pmix_v9"});
  CHECK(PreferredPmix(old) == std::optional<std::string>("pmix_v10"));
  CHECK(PreferredPmix({"pmix"}) == std::optional<std::string>("pmix"));
  CHECK_FALSE(PreferredPmix(ParsePmixPlugins("MPI plugin types are...\n\tnone\n\tpmi2\n")));
}

TEST_CASE("default partition rule", "[slurm_probe]") {
  auto part = [](const std::string& name, bool marked = false) {
    SinfoPartition p;
    p.name = name;
    p.state = "up";
    p.default_marked = marked;
    return p;
  };
  std::vector<SinfoPartition> parts = {part("batch-hp"), part("batch-backfill"),
                                       part("admin-admin"), part("short"), part("long", true)};
  CHECK(ChooseDefaultPartition(parts, {"batch-hp", "batch-backfill", "short", "long"}) == "long");
  CHECK(ChooseDefaultPartition(parts, {"batch-hp", "batch-backfill", "short"}) == "short");
  CHECK(ChooseDefaultPartition(parts, {"batch-hp", "batch-backfill"}) == "batch-backfill");
  CHECK(ChooseDefaultPartition(parts, {"admin-admin", "batch-hp"}) == "batch-hp");
  CHECK_FALSE(ChooseDefaultPartition(parts, {}));
}

TEST_CASE("probe stream: sections, junk before them, truncation", "[slurm_probe]") {
  Result<ProbeOutput> ok = ParseProbeStream(
      "Welcome to the login node\n@@m@@ a 0 3 2\nabcxy@@m@@ b 7 0 4\nerr\n", "@@m@@");
  REQUIRE(ok.ok());
  CHECK(ok.value().Find("a")->out == "abc");
  CHECK(ok.value().Find("a")->err == "xy");
  CHECK(ok.value().Find("b")->exit_code == 7);
  CHECK(ok.value().Find("b")->err == "err\n");
  Result<ProbeOutput> truncated = ParseProbeStream("@@m@@ a 0 30 0\nabc", "@@m@@");
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.status().message().find("truncated in section 'a'") != std::string::npos);
  Result<ProbeOutput> none = ParseProbeStream("bash: sinfo: command not found\n", "@@m@@");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message().find("bash: sinfo: command not found") != std::string::npos);
}

TEST_CASE("slurm_env.json round trip and policy fields", "[slurm_probe]") {
  SlurmEnv env = EnvFromFixture("root.stream");
  std::string text = SlurmEnvToJson(env);
  // Key order of spec 000's example.
  size_t last = 0;
  for (const char* key : {"\"user\"", "\"default_account\"", "\"accounts\"",
                          "\"default_partition\"", "\"partitions\"", "\"pmix\"", "\"errors\""}) {
    size_t at = text.find(key);
    REQUIRE(at != std::string::npos);
    CHECK(at >= last);
    last = at;
  }
  CHECK(text.find("cluster_name") == std::string::npos);
  Result<SlurmEnv> back = SlurmEnvFromJson(text, "slurm_env.json");
  REQUIRE(back.ok());
  CHECK(SlurmEnvToJson(back.value()) == text);
  CHECK_FALSE(back.value().policy_merged);

  env.policy_merged = true;
  env.cluster_name = "eos";
  env.mounts = std::vector<std::string>{"/lustre/models:/models"};
  env.mfa_style = false;
  std::string merged = SlurmEnvToJson(env);
  CHECK(merged.find("\"ssh_host\": null") != std::string::npos);
  CHECK(merged.find("\"mfa_style\": false") != std::string::npos);
  Result<SlurmEnv> merged_back = SlurmEnvFromJson(merged, "slurm_env.json");
  REQUIRE(merged_back.ok());
  CHECK(merged_back.value().policy_merged);
  CHECK(SlurmEnvToJson(merged_back.value()) == merged);

  Result<SlurmEnv> bad = SlurmEnvFromJson("{\"partitions\": [{\"name\": 3}]}", "x.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("x.json: partitions[0]: key 'name'") != std::string::npos);
}

TEST_CASE("text format", "[slurm_probe]") {
  std::string text = SlurmEnvToText(EnvFromFixture("noacct.stream"));
  CHECK(text.find("user: root\n") != std::string::npos);
  CHECK(text.find("default_account: (none)\n") != std::string::npos);
  CHECK(text.find("  batch ") != std::string::npos);
  CHECK(text.find("pmix: available pmix, pmix_v4; preferred pmix_v4\n") != std::string::npos);
  CHECK(text.find("  - 'sacctmgr show assoc' failed") != std::string::npos);
}

namespace {

// A directory of stand-in Slurm commands: each logs its argv, sleeps `delay`, prints
// the output captured from the real cluster.
class FakeSlurm {
 public:
  explicit FakeSlurm(double delay) {
    dir_ = fs::temp_directory_path() / ("trtllm_run_fake_slurm_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    Result<ProbeOutput> output = ParseProbeStream(SlurmFixture("root.stream"), "@@fixture@@");
    REQUIRE(output.ok());
    auto write = [&](const std::string& name, const std::string& body) {
      std::string path = (dir_ / name).string();
      std::ofstream(path) << "#!/bin/bash\necho \"" << name << " $*\" >>"
                          << (dir_ / "calls").string() << "\nsleep " << delay << "\n"
                          << body;
      ::chmod(path.c_str(), 0755);
    };
    auto cat = [&](const std::string& section) {
      std::string file = (dir_ / (section + ".txt")).string();
      std::ofstream(file) << output.value().Find(section)->out;
      return "cat " + file + "\n";
    };
    write("sinfo", cat("sinfo"));
    write("scontrol", cat("nodes"));
    write("srun", cat("mpi"));
    std::string defacct = cat("defacct"), assoc = cat("assoc");
    write("sacctmgr", "case \"$*\" in *DefaultAccount*) " + defacct.substr(0, defacct.size() - 1) +
                          " ;; *) " + assoc.substr(0, assoc.size() - 1) + " ;; esac\n");
    write("sbatch", "case \"$*\" in *restricted*) exit 1 ;; esac\necho 'sbatch: Job 1 to start'\n");
  }
  ~FakeSlurm() {
    std::error_code error;
    fs::remove_all(dir_, error);
  }
  std::string dir() const { return dir_.string(); }
  std::vector<std::string> Calls(const std::string& tool) const {
    std::vector<std::string> calls;
    std::ifstream in(dir_ / "calls");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(tool + " ", 0) == 0) calls.push_back(line);
    }
    return calls;
  }

 private:
  fs::path dir_;
};

// Sets PATH for the lifetime of the object.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& first) : old_(std::getenv("PATH")) {
    ::setenv("PATH", (first + ":" + old_).c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

}  // namespace

TEST_CASE("the probe script runs its queries concurrently, one sinfo and one scontrol",
          "[slurm_probe]") {
  const double delay = 1.0;
  FakeSlurm fake(delay);
  ScopedPath path(fake.dir());
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  auto start = std::chrono::steady_clock::now();
  Result<SlurmEnv> env = ProbeSlurm(*local, ProbeOptions{});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(env.ok());
  // Two rounds (queries, then the access checks), each as long as one query; run one by
  // one, the 10 commands would take 10 s.
  CHECK(seconds < 4 * delay);
  CHECK(fake.Calls("sinfo").size() == 1);
  CHECK(fake.Calls("scontrol").size() == 1);
  CHECK(fake.Calls("srun").size() == 1);
  CHECK(fake.Calls("sacctmgr").size() == 2);
  CHECK(fake.Calls("sbatch").size() == 5);  // the up partitions
  for (const std::string& call : fake.Calls("sbatch")) {
    CHECK(call.find("--test-only") != std::string::npos);
    CHECK(call.find("--account=research") != std::string::npos);
  }
  CHECK(env.value().default_partition == std::optional<std::string>("batch"));
  CHECK(env.value().errors.empty());
}

TEST_CASE("the probe through a shell without Slurm tools", "[slurm_probe]") {
  // A PATH with the shell utilities the script needs and no Slurm command.
  fs::path dir = fs::temp_directory_path() / ("trtllm_run_noslurm_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* tool : {"bash", "mktemp", "rm", "cat", "wc", "id", "timeout", "sed"}) {
    for (const char* bin : {"/usr/bin/", "/bin/"}) {
      std::error_code error;
      if (fs::exists(std::string(bin) + tool)) {
        fs::create_symlink(std::string(bin) + tool, dir / tool, error);
        break;
      }
    }
  }
  std::string old = std::getenv("PATH");
  ::setenv("PATH", dir.c_str(), 1);
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<SlurmEnv> env = ProbeSlurm(*local, ProbeOptions{});
  ::setenv("PATH", old.c_str(), 1);
  fs::remove_all(dir);
  REQUIRE(env.ok());
  CHECK(env.value().errors == std::vector<std::string>{kSlurmToolsNotFound});
  CHECK(SlurmProbeExitStatus(env.value()) == 1);
  CHECK_FALSE(env.value().user.empty());
}

TEST_CASE("without access checks the default partition is sinfo's, unverified", "[slurm_probe]") {
  Result<ProbeOutput> output = ParseProbeStream(SlurmFixture("root.stream"), "@@fixture@@");
  REQUIRE(output.ok());
  ProbeOutput unchecked = output.value();
  for (auto it = unchecked.sections.begin(); it != unchecked.sections.end();) {
    it = it->first.rfind("access=", 0) == 0 ? unchecked.sections.erase(it) : std::next(it);
  }
  ProbeOptions options;
  options.check_access = false;
  SlurmEnv env = SlurmEnvFromProbe(unchecked, options);
  CHECK(env.default_partition == std::optional<std::string>("batch"));
  CHECK(env.errors.empty());
  CHECK(SlurmProbeScript(options, "@@m@@").find("CHECK=0") != std::string::npos);
}
