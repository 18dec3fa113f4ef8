// slurm_env.json, saved by `trtllm-run env --output` and given back with
// --slurm-env-file: SlurmEnvFromJson, and SlurmEnvToJson on what it accepted.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trtllm_run/environment.h"

namespace {

std::string Rewrite(const std::string& json) {
  trtllm_run::Result<trtllm_run::SlurmEnv> env = trtllm_run::SlurmEnvFromJson(json, "again.json");
  FUZZ_CHECK(env.ok());
  return trtllm_run::SlurmEnvToJson(env.value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::Result<trtllm_run::SlurmEnv> env =
      trtllm_run::SlurmEnvFromJson(text, "fuzz_slurm_env.json");
  if (!env.ok()) {
    FUZZ_CHECK(env.status().message().find("fuzz_slurm_env.json") != std::string::npos);
    return 0;
  }
  std::string written = trtllm_run::SlurmEnvToJson(env.value());
  std::string again = Rewrite(written);
  if (trtllm_run_fuzz::IsValidUtf8(text)) FUZZ_CHECK(again == written);
  FUZZ_CHECK(Rewrite(again) == again);
  return 0;
}
