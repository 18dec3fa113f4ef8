// Host facts read from command output (env_check.h): nvidia-smi GPU names, the cluster
// name in `scontrol show config`, GPU product names to device types.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "placement/env_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = trtllm_run_fuzz::AsText(data, size);
  trtllm_run::GpuInventory gpus = trtllm_run::ParseNvidiaSmiNames(text);
  FUZZ_CHECK(!gpus.mixed || gpus.names.size() >= 2);
  for (const std::string& name : gpus.names) (void)trtllm_run::DeviceTypeFromGpuName(name);
  (void)trtllm_run::DeviceTypeFromGpuName(text);
  std::optional<std::string> cluster = trtllm_run::ParseClusterName(text);
  FUZZ_CHECK(!cluster || cluster->find('\n') == std::string::npos);
  return 0;
}
