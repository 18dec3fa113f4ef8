// The env check: nvidia-smi names to device types (tests/fixtures/nvidia-smi), cluster
// name from a real `scontrol show config`, the facts from the script's sections, and
// the check run for real on this host.
#include "placement/env_check.h"

#include <sys/utsname.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

std::string Fixture(const std::string& dir, const std::string& name) {
  fs::path path = fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / dir / name;
  Result<std::string> text = ReadFile(path.string());
  REQUIRE(text.ok());
  return text.value();
}

ProbeSection Section(const std::string& out, int exit_code = 0, const std::string& err = "") {
  ProbeSection section;
  section.out = out;
  section.exit_code = exit_code;
  section.err = err;
  return section;
}

bool OnPath(const std::string& tool) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::error_code error;
    if (fs::exists(fs::path(path.substr(start, end - start)) / tool, error)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

TEST_CASE("device types from nvidia-smi product names", "[env_check]") {
  struct Case {
    const char* file;
    size_t count;
    const char* device_type;
  };
  const Case cases[] = {
      {"h100_dgx_8gpu.txt", 8, "H100"},       {"h100_nvl_2gpu.txt", 2, "H100"},
      {"a100_sxm4_8gpu.txt", 8, "A100"},      {"a100_old_driver_2gpu.txt", 2, "A100"},
      {"h200_8gpu.txt", 8, "H200"},           {"b200_8gpu.txt", 8, "B200"},
      {"gb200_4gpu.txt", 4, "GB200"},         {"gh200_1gpu.txt", 1, "GH200"},
      {"l40s_4gpu.txt", 4, "L40S"},           {"v100_4gpu.txt", 4, "V100"},
      {"rtx6000_ada_1gpu.txt", 1, "RTX6000"}, {"mixed_geforce_2gpu.txt", 2, "RTX4090"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    GpuInventory inventory = ParseNvidiaSmiNames(Fixture("nvidia-smi", c.file));
    CHECK(inventory.names.size() == c.count);
    CHECK(inventory.device_type == c.device_type);
    CHECK(inventory.mixed == (std::string(c.file) == "mixed_geforce_2gpu.txt"));
  }
  CHECK(DeviceTypeFromGpuName("NVIDIA A10G") == "A10G");
  CHECK(DeviceTypeFromGpuName("nvidia l40s") == "L40S");
  CHECK(DeviceTypeFromGpuName("NVIDIA Graphics Device") == "GraphicsDevice");
  CHECK(DeviceTypeFromGpuName("").empty());
}

TEST_CASE("cluster name from a real scontrol show config", "[env_check]") {
  CHECK(ParseClusterName(Fixture("slurm", "scontrol_show_config.txt")) ==
        std::optional<std::string>("trtllm-test"));
  CHECK_FALSE(ParseClusterName("SlurmctldHost = x\n"));
  CHECK_FALSE(ParseClusterName("ClusterName = (null)\n"));
}

TEST_CASE("env facts from the script's sections", "[env_check]") {
  ClusterCatalog catalog;
  catalog.path = "clusters.yaml";
  ClusterEntry eos;
  eos.name = "EOS";
  eos.gpus_per_node = 8;
  eos.models_repo_host = "/lustre/models";
  catalog.clusters.push_back(eos);

  ProbeOutput slurm_host;
  slurm_host.sections["arch"] = Section("aarch64");
  slurm_host.sections["gpus"] = Section(Fixture("nvidia-smi", "gb200_4gpu.txt"));
  slurm_host.sections["docker"] =
      Section("{\"nvidia\":{\"path\":\"nvidia-container-runtime\"},\"runc\":{\"path\":\"runc\"}}");
  slurm_host.sections["slurm_missing"] = Section("");
  slurm_host.sections["config"] = Section("ClusterName = eos\n");
  EnvFacts facts = EnvFactsFromProbe(slurm_host, &catalog, "/from/env");
  CHECK(facts.arch == "aarch64");
  CHECK(facts.gpu_count == 4);
  CHECK(facts.gpu_name == "NVIDIA GB200");
  CHECK(facts.device_type == "GB200");
  CHECK(facts.docker_available);
  CHECK(facts.nvidia_runtime);
  CHECK(facts.slurm_available);
  CHECK(facts.cluster_name == std::optional<std::string>("eos"));
  CHECK(facts.gpus_per_node == 8);  // from the catalog (case-insensitive name)
  CHECK(facts.default_models_repo == std::optional<std::string>("/lustre/models"));
  CHECK(facts.notes.size() >= 5);

  ProbeOutput bare;
  bare.sections["arch"] = Section("x86_64\n");
  bare.sections["gpus"] = Section(Fixture("nvidia-smi", "no_driver_exit9.txt"), 9);
  bare.sections["docker"] =
      Section("null\n", 1, "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.");
  bare.sections["slurm_missing"] = Section(" sbatch squeue sinfo scontrol");
  EnvFacts none = EnvFactsFromProbe(bare, &catalog, "/from/env");
  CHECK(none.gpu_count == 0);  // not an error
  CHECK(none.device_type.empty());
  CHECK_FALSE(none.docker_available);
  CHECK(none.docker_error == "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.");
  CHECK_FALSE(none.slurm_available);
  CHECK_FALSE(none.cluster_name);
  CHECK(none.gpus_per_node == 0);
  CHECK(none.default_models_repo == std::optional<std::string>("/from/env"));
  CHECK(none.notes[0].find("exit 9") != std::string::npos);

  ProbeOutput no_tools;
  no_tools.sections["arch"] = Section("x86_64");
  EnvFacts empty = EnvFactsFromProbe(no_tools, nullptr, "");
  CHECK(empty.gpu_count == 0);
  CHECK(empty.docker_error == "docker not found on PATH");
  CHECK_FALSE(empty.default_models_repo);
}

TEST_CASE("the env check on this host", "[env_check]") {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<EnvFacts> facts = CheckEnvironment(*local, nullptr);
  INFO(facts.status().ToString());
  REQUIRE(facts.ok());
  struct utsname name;
  REQUIRE(::uname(&name) == 0);
  CHECK(facts.value().arch == name.machine);
  if (!OnPath("nvidia-smi")) {
    CHECK(facts.value().gpu_count == 0);
    CHECK(facts.value().device_type.empty());
  }
  bool tools = OnPath("sbatch") && OnPath("squeue") && OnPath("sinfo") && OnPath("scontrol");
  CHECK(facts.value().slurm_available == tools);
  if (!OnPath("docker")) CHECK_FALSE(facts.value().docker_available);
  std::string json = EnvFactsToJson(facts.value());
  CHECK(json.find("\"arch\": \"" + std::string(name.machine) + "\"") != std::string::npos);
}
