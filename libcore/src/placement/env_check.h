// The env check (replaces the exec-env-check skill): GPUs, Docker, Slurm client tools,
// cluster name, arch and the default models repo of the host a Scenario runs on. Like
// the Slurm probe it is one bash script on `bash -s` whose queries run concurrently.
#ifndef TRTLLM_RUN_PLACEMENT_ENV_CHECK_H_
#define TRTLLM_RUN_PLACEMENT_ENV_CHECK_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/catalog.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The device type of an nvidia-smi product name: "NVIDIA H100 80GB HBM3" -> "H100",
// "NVIDIA A100-SXM4-80GB" -> "A100", "NVIDIA GB200" -> "GB200", "NVIDIA L40S" ->
// "L40S". Names outside the known table give the raw model token: the words after the
// vendor prefixes (NVIDIA, Tesla, GeForce, Quadro) up to the first one holding a digit,
// joined ("NVIDIA RTX 6000 Ada Generation" -> "RTX6000"). "" for an empty name.
std::string DeviceTypeFromGpuName(std::string_view name);

// `nvidia-smi --query-gpu=name --format=csv,noheader`: one product name per line.
struct GpuInventory {
  std::vector<std::string> names;  // one per GPU, in index order
  std::string device_type;         // of the first GPU
  bool mixed = false;              // GPUs of more than one device type
};
GpuInventory ParseNvidiaSmiNames(std::string_view output);

// ClusterName from `scontrol show config` ("ClusterName             = eos").
std::optional<std::string> ParseClusterName(std::string_view show_config);

// The env-check script (`marker` delimits its sections, as for the Slurm probe).
std::string EnvCheckScript(const std::string& marker, int command_timeout_seconds);

// Builds the facts from the script's sections: pure. `catalog` (may be null) supplies
// gpus_per_node and models_repo_host for a known cluster; `models_repo_env` is
// $TRTLLM_RUN_MODELS_REPO ("" when unset), used when the catalog has none.
EnvFacts EnvFactsFromProbe(const ProbeOutput& output, const ClusterCatalog* catalog,
                           const std::string& models_repo_env);

// Runs the env check through `scenario`. No nvidia-smi means zero GPUs, an unreachable
// Docker engine means docker_available false (docker_error says why): neither is an
// error. Non-OK only when the script could not run or its output was not understood.
Result<EnvFacts> CheckEnvironment(Scenario& scenario, const ClusterCatalog* catalog);

// The facts as a JSON object (stable key order).
std::string EnvFactsToJson(const EnvFacts& facts);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLACEMENT_ENV_CHECK_H_
