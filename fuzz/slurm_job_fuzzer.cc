// What the Slurm executors read back from the scheduler and from the job's own output
// (slurm_job.h, slurm_run.h): scontrol show job, sacct -P, scontrol show config,
// slurm.conf, Slurm times and exit codes, the job's end-marker, step-exit and
// "CANCELLED AT" lines, and #SBATCH output paths of a batch script. Every parser sees
// the whole input, the line parsers each line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "model/slurm_time.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/submit.h"

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

  for (const trtllm_run::SlurmJobRecord& job : trtllm_run::ParseScontrolJobs(text)) {
    (void)trtllm_run::IsTerminalSlurmState(job.state);
    (void)trtllm_run::ParseSlurmDuration(job.run_time);
  }
  for (const trtllm_run::SlurmAcctRecord& row : trtllm_run::ParseSacct(text)) {
    (void)trtllm_run::IsTerminalSlurmState(row.state);
  }
  (void)trtllm_run::IsInvalidJobIdError(text);
  (void)trtllm_run::IsAccountingDisabledError(text);
  trtllm_run::SlurmConfigFacts config = trtllm_run::ParseSlurmConfig(text);
  FUZZ_CHECK(!config.min_job_age_seconds || *config.min_job_age_seconds >= 0);
  trtllm_run::SlurmConfigFacts conf_file = trtllm_run::ParseSlurmConfFile(text);
  FUZZ_CHECK(!conf_file.kill_wait_seconds || *conf_file.kill_wait_seconds >= 0);
  trtllm_run::BatchOutputPaths paths = trtllm_run::ParseBatchOutputPaths(std::string(text));
  std::string token = trtllm_run::EndMarkerTokenOfScript(text);
  FUZZ_CHECK(token.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos);
  FUZZ_CHECK(!paths.out.empty());

  for (std::string_view line : Lines(text)) {
    std::optional<int> seconds = trtllm_run::ParseSlurmDuration(line);
    FUZZ_CHECK(!seconds || *seconds >= 0);
    (void)trtllm_run::ParseSlurmExit(line);
    (void)trtllm_run::NormalizeSlurmState(line);
    std::optional<int> end = trtllm_run::ParseEndMarker(line, "00112233445566778899aabbccddeeff");
    FUZZ_CHECK(!end || (*end >= 0 && *end <= 999));
    FUZZ_CHECK(!trtllm_run::ParseEndMarker(line, ""));
    (void)trtllm_run::ParseStepExitLine(line);
    (void)trtllm_run::ParseCancelLine(line);
  }
  return 0;
}
