// Request files (YAML or JSON mappings of field names to values): LoadRequestText.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trtllm_run/request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::CaseRequest request;
  trtllm_run::Status status = trtllm_run::LoadRequestText(text, "fuzz_case.yaml", &request);
  if (status.ok()) {
    // Whatever was accepted is a request the rest of the pipeline can classify.
    (void)trtllm_run::ClassifyCommand(request);
    // The password never comes from a file.
    FUZZ_CHECK(!request.slurm_password.has_value());
  } else {
    FUZZ_CHECK(status.message().find("fuzz_case.yaml") != std::string::npos);
  }
  return 0;
}
