// Output of the Slurm probe and of the env check, from this host or over SSH
// (slurm_probe.h, env_check.h): the section stream (ParseProbeStream), the documents
// built from it (SlurmEnvFromProbe, EnvFactsFromProbe) and the parsers of the single
// outputs on the same bytes: sinfo, scontrol show node, srun --mpi=list, gres strings.
// The input is a section stream with the marker "@@PROBE@@" (fuzz/corpus/slurm_probe
// holds real ones from the test clusters and this host).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "placement/env_check.h"
#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/environment.h"

namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = trtllm_run_fuzz::AsText(data, size);

  trtllm_run::Result<trtllm_run::ProbeOutput> output =
      trtllm_run::ParseProbeStream(text, "@@PROBE@@");
  if (output.ok()) {
    FUZZ_CHECK(!output.value().sections.empty());
    trtllm_run::ProbeOptions options;
    trtllm_run::SlurmEnv env = trtllm_run::SlurmEnvFromProbe(output.value(), options);
    int status = trtllm_run::SlurmProbeExitStatus(env);
    FUZZ_CHECK(status >= 0 && status <= 2);
    (void)trtllm_run::SlurmEnvToText(env);
    // The document it makes is one slurm_env.json can hold.
    std::string json = trtllm_run::SlurmEnvToJson(env);
    trtllm_run::Result<trtllm_run::SlurmEnv> back = trtllm_run::SlurmEnvFromJson(json, "probe");
    FUZZ_CHECK(back.ok());
    trtllm_run::EnvFacts facts = trtllm_run::EnvFactsFromProbe(output.value(), nullptr, "");
    (void)trtllm_run::EnvFactsToJson(facts);
  } else {
    FUZZ_CHECK(!output.status().message().empty());
  }

  for (const trtllm_run::SinfoPartition& partition : trtllm_run::ParseSinfoPartitions(text)) {
    FUZZ_CHECK(!partition.name.empty());
    (void)trtllm_run::GpusPerNodeFromGres(partition.gres);
  }
  (void)trtllm_run::ParseScontrolNodes(text);
  std::vector<std::string> pmix = trtllm_run::ParsePmixPlugins(text);
  std::optional<std::string> preferred = trtllm_run::PreferredPmix(pmix);
  if (preferred) {
    bool listed = false;
    for (const std::string& plugin : pmix) listed = listed || plugin == *preferred;
    FUZZ_CHECK(listed);
  }
  for (std::string_view line : Lines(text)) {
    std::optional<int> gpus = trtllm_run::GpusPerNodeFromGres(line);
    FUZZ_CHECK(!gpus || *gpus >= 0);
    (void)trtllm_run::GresRequiresGpu(line);
  }
  return 0;
}
