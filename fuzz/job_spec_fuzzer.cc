// job_spec.json, read back by executors to run, re-attach to or cancel a job:
// JobSpecFromJson, and JobSpecToJson on what it accepted.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trtllm_run/sdk/job_spec.h"

namespace {

std::string Rewrite(const std::string& json) {
  trtllm_run::Result<trtllm_run::JobSpec> spec = trtllm_run::JobSpecFromJson(json, "again.json");
  FUZZ_CHECK(spec.ok());
  return trtllm_run::JobSpecToJson(spec.value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::Result<trtllm_run::JobSpec> spec =
      trtllm_run::JobSpecFromJson(text, "fuzz_spec.json");
  if (!spec.ok()) {
    FUZZ_CHECK(spec.status().message().find("fuzz_spec.json") != std::string::npos);
    return 0;
  }
  // What was written reads back and is written the same way again. (Invalid UTF-8 in the
  // input is replaced when written, which may reorder extra keys once.)
  std::string written = trtllm_run::JobSpecToJson(spec.value());
  std::string again = Rewrite(written);
  if (trtllm_run_fuzz::IsValidUtf8(text)) FUZZ_CHECK(again == written);
  FUZZ_CHECK(Rewrite(again) == again);
  return 0;
}
