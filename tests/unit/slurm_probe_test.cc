// The Slurm probe's parsers and document, on outputs captured from real Slurm 22.05
// clusters (tests/fixtures/slurm, see capture.sh there), and its script run for real
// with bash (stand-in Slurm commands where the point is concurrency and counting).
#include "slurm/probe/slurm_probe.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "trtllm_run/environment.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

std::string SlurmFixture(const std::string& name) {
  fs::path dir = fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "slurm";
  Result<std::string> text = ReadFile((dir / name).string());
  REQUIRE(text.ok());
  return text.value();
}

SlurmEnv EnvFromFixture(const std::string& name, const ProbeOptions& options = {}) {
  Result<ProbeOutput> output = ParseProbeStream(SlurmFixture(name), "@@fixture@@");
  REQUIRE(output.ok());
  return SlurmEnvFromProbe(output.value(), options);
}

std::string CurrentUser() {
  const struct passwd* entry = ::getpwuid(::getuid());
  REQUIRE(entry != nullptr);
  return entry->pw_name;
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
  // Found by fuzzing: a version too long for a long threw out_of_range.
  CHECK(PreferredPmix({"pmix_v99999999999999999999", "pmix_v3"}) ==
        std::optional<std::string>("pmix_v3"));
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

// `scontrol -o show assoc_mgr users=root flags=users,assoc` on trtllm-test, as the probe
// keeps it (the lines about root; the limits fields after DefAssoc= cut here): Lft
// orders root's associations proj2, research, root, as sacctmgr lists them.
const char kAssocMgrRoot[] =
    "Current Association Manager state\n"
    "User Records\n"
    "UserName=root(0) DefAccount=research DefWckey= AdminLevel=Administrator\n"
    "Association Records\n"
    "ClusterName=trtllm-test Account=root UserName=root(0) Partition= Priority=0 ID=2 "
    "SharesRaw/Norm/Level/Factor=1/18446744073709551616.00/1/0.00 "
    "UsageRaw/Norm/Efctv=0.00/1.00/0.00 ParentAccount= Lft=14 DefAssoc=No\n"
    "ClusterName=trtllm-test Account=proj2 UserName=root(0) Partition= Priority=0 ID=6 "
    "SharesRaw/Norm/Level/Factor=1/18446744073709551616.00/1/0.00 "
    "UsageRaw/Norm/Efctv=0.00/1.00/0.00 ParentAccount= Lft=3 DefAssoc=No\n"
    "ClusterName=trtllm-test Account=research UserName=root(0) Partition= Priority=0 ID=5 "
    "SharesRaw/Norm/Level/Factor=1/18446744073709551616.00/1/0.00 "
    "UsageRaw/Norm/Efctv=0.00/1.00/0.00 ParentAccount= Lft=11 DefAssoc=Yes\n";

// The same on a cluster whose controller has no association data (trtllm-noacct).
const char kAssocMgrEmpty[] =
    "Current Association Manager state\n"
    "No users currently cached in Slurm.\n"
    "No associations currently cached in Slurm.\n";

// A directory of stand-in Slurm commands: each logs its argv, sleeps `delay`, prints
// the output captured from the real cluster.
class FakeSlurm {
 public:
  // `refused`: a case pattern of the sbatch arguments the fake refuses; `assoc_mgr`: what
  // `scontrol show assoc_mgr` prints (root's records become the current user's), on
  // stderr when it exits with `assoc_mgr_exit` != 0.
  explicit FakeSlurm(double delay, const std::string& refused = "*restricted*",
                     std::string assoc_mgr = kAssocMgrRoot, int assoc_mgr_exit = 0) {
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
    std::string nodes = cat("nodes");
    std::string assoc_mgr_file = (dir_ / "assoc_mgr.txt").string();
    const std::string me = "UserName=" + CurrentUser() + "(" + std::to_string(::getuid()) + ")";
    for (size_t at = assoc_mgr.find("UserName=root(0)"); at != std::string::npos;
         at = assoc_mgr.find("UserName=root(0)", at + me.size())) {
      assoc_mgr.replace(at, 16, me);
    }
    std::ofstream(assoc_mgr_file) << assoc_mgr;
    write("scontrol", "case \"$*\" in *assoc_mgr*) cat " + assoc_mgr_file +
                          (assoc_mgr_exit != 0 ? " >&2; exit " + std::to_string(assoc_mgr_exit)
                                               : std::string()) +
                          " ;; *) " + nodes.substr(0, nodes.size() - 1) + " ;; esac\n");
    write("srun", cat("mpi"));
    std::string defacct = cat("defacct"), assoc = cat("assoc");
    write("sacctmgr", "case \"$*\" in *DefaultAccount*) " + defacct.substr(0, defacct.size() - 1) +
                          " ;; *) " + assoc.substr(0, assoc.size() - 1) + " ;; esac\n");
    write("sbatch",
          "case \"$*\" in " + refused + ") exit 1 ;; esac\necho 'sbatch: Job 1 to start'\n");
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
  CHECK(fake.Calls("srun").size() == 1);
  // The accounts come from the controller's association cache: no slurmdbd query.
  std::vector<std::string> scontrol = fake.Calls("scontrol");
  REQUIRE(scontrol.size() == 2);
  CHECK(std::count(scontrol.begin(), scontrol.end(),
                   "scontrol -o show assoc_mgr users=" + CurrentUser() + " flags=users,assoc") ==
        1);
  CHECK(fake.Calls("sacctmgr").empty());
  CHECK(env.value().accounts == std::vector<std::string>{"proj2", "research", "root"});
  CHECK(env.value().default_account == std::optional<std::string>("research"));
  // One access check: the partition the access rule ranks first (batch, sinfo's default)
  // was accepted, so it is the default and the others need no check. Without --account
  // the check uses the user's default account (research, which the cache confirms).
  std::vector<std::string> sbatch = fake.Calls("sbatch");
  REQUIRE(sbatch.size() == 1);
  CHECK(sbatch[0].find("--test-only") != std::string::npos);
  CHECK(sbatch[0].find("--partition=batch ") != std::string::npos);
  CHECK(sbatch[0].find("--account") == std::string::npos);
  CHECK(env.value().default_partition == std::optional<std::string>("batch"));
  CHECK(env.value().errors.empty());
}

TEST_CASE("when the first-ranked partition is refused, the others are checked at once",
          "[slurm_probe]") {
  const double delay = 0.5;
  FakeSlurm fake(delay, "*restricted*|*--partition=batch\\ *");
  ScopedPath path(fake.dir());
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  auto start = std::chrono::steady_clock::now();
  Result<SlurmEnv> env = ProbeSlurm(*local, ProbeOptions{});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(env.ok());
  CHECK(seconds < 5 * delay);               // sinfo, the first check, the others at once
  CHECK(fake.Calls("sbatch").size() == 5);  // every up partition
  // batch refused: the access rule's next plain name that was accepted (restricted is
  // refused too), before batch-backfill.
  CHECK(env.value().default_partition == std::optional<std::string>("debug"));
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

TEST_CASE("without association data in the controller the probe asks slurmdbd", "[slurm_probe]") {
  // The cache is empty (accounting disabled) or the query fails: the two sacctmgr
  // queries run instead, as soon as that is known, beside the access checks.
  const double delay = 1.0;
  for (bool fails : {false, true}) {
    FakeSlurm fake(
        delay, "*restricted*",
        fails ? "slurm_load_assoc_mgr_info error: Zero Bytes were transmitted\n" : kAssocMgrEmpty,
        fails ? 1 : 0);
    ScopedPath path(fake.dir());
    std::unique_ptr<Scenario> local = MakeLocalScenario();
    auto start = std::chrono::steady_clock::now();
    Result<SlurmEnv> env = ProbeSlurm(*local, ProbeOptions{});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(env.ok());
    CHECK(seconds < 4 * delay);  // {assoc_mgr, sinfo}, then {sacctmgr, the check}
    CHECK(fake.Calls("sacctmgr").size() == 2);
    // sacctmgr's answers (root.stream's): the same document as from the cache.
    CHECK(env.value().accounts == std::vector<std::string>{"proj2", "research", "root"});
    CHECK(env.value().default_account == std::optional<std::string>("research"));
    CHECK(env.value().default_partition == std::optional<std::string>("batch"));
    CHECK(env.value().errors.empty());
  }
}

TEST_CASE("without a DefAccount in the cache the first association is checked", "[slurm_probe]") {
  std::string no_default = kAssocMgrRoot;
  no_default.replace(no_default.find("DefAccount=research"), 19, "DefAccount=");
  FakeSlurm fake(0, "*restricted*", no_default);
  ScopedPath path(fake.dir());
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<SlurmEnv> env = ProbeSlurm(*local, ProbeOptions{});
  REQUIRE(env.ok());
  CHECK(fake.Calls("sacctmgr").empty());
  // The first association in sacctmgr's order (lowest Lft) is the default, and the
  // access checks are redone with it.
  CHECK(env.value().default_account == std::optional<std::string>("proj2"));
  std::vector<std::string> sbatch = fake.Calls("sbatch");
  REQUIRE(sbatch.size() == 2);
  CHECK(sbatch[0].find("--account") == std::string::npos);
  CHECK(sbatch[1].find("--partition=batch --account=proj2 ") != std::string::npos);
}

TEST_CASE("assoc_mgr records: the user's, ordered by Lft, either format", "[slurm_probe]") {
  AssocMgrUser root = ParseAssocMgr(kAssocMgrRoot, "root");
  CHECK(root.default_account == "research");
  CHECK(root.accounts == std::vector<std::string>{"proj2", "research", "root"});
  // The multi-line format, account records and other users' records among them, a
  // per-partition association repeating an account, a user whose name is a prefix.
  const char multi[] =
      "Current Association Manager state\n\n"
      "User Records\n\n"
      "UserName=bob(1005) DefAccount=other DefWckey= AdminLevel=None\n"
      "UserName=al(1003) DefAccount=gpu DefWckey= AdminLevel=None\n\n"
      "Association Records\n\n"
      "ClusterName=c Account=gpu UserName= Partition= Priority=0 ID=3\n"
      "    ParentAccount=root(1) Lft=2 DefAssoc=No\n"
      "ClusterName=c Account=gpu UserName=al(1003) Partition=big Priority=0 ID=9\n"
      "    ParentAccount= Lft=7 DefAssoc=No\n"
      "ClusterName=c Account=cpu UserName=al(1003) Partition= Priority=0 ID=8\n"
      "    ParentAccount= Lft=5 DefAssoc=No\n"
      "ClusterName=c Account=gpu UserName=al(1003) Partition= Priority=0 ID=4\n"
      "    ParentAccount= Lft=3 DefAssoc=Yes\n"
      "ClusterName=c Account=other UserName=alice(1004) Partition= Priority=0 ID=5\n"
      "    ParentAccount= Lft=4 DefAssoc=Yes\n";
  AssocMgrUser al = ParseAssocMgr(multi, "al");
  CHECK(al.default_account == "gpu");
  CHECK(al.accounts == std::vector<std::string>{"gpu", "cpu"});
  CHECK(ParseAssocMgr(multi, "alice").accounts == std::vector<std::string>{"other"});
  CHECK(ParseAssocMgr(multi, "alice").default_account.empty());  // no user record
  AssocMgrUser nobody = ParseAssocMgr(kAssocMgrEmpty, "root");
  CHECK(nobody.accounts.empty());
  CHECK(nobody.default_account.empty());
}

TEST_CASE("the document prefers the cache and falls back to sacctmgr's sections", "[slurm_probe]") {
  Result<ProbeOutput> output = ParseProbeStream(SlurmFixture("root.stream"), "@@fixture@@");
  REQUIRE(output.ok());
  ProbeOutput cached = output.value();
  cached.sections.erase("defacct");
  cached.sections.erase("assoc");
  cached.sections["assoc_mgr"].out = kAssocMgrRoot;
  SlurmEnv from_cache = SlurmEnvFromProbe(cached, {});
  SlurmEnv from_slurmdbd = EnvFromFixture("root.stream");
  CHECK(SlurmEnvToJson(from_cache) == SlurmEnvToJson(from_slurmdbd));
  // A failed or empty cache query: sacctmgr's sections decide, errors and all.
  ProbeOutput failed = ParseProbeStream(SlurmFixture("noassoc.stream"), "@@fixture@@").value();
  failed.sections["assoc_mgr"].exit_code = 1;
  failed.sections["assoc_mgr"].out = kAssocMgrRoot;  // ignored: the query failed
  SlurmEnv env = SlurmEnvFromProbe(failed, {});
  CHECK(env.accounts.empty());
  CHECK(HasError(env, "no SLURM account associations for user noassoc"));
}
