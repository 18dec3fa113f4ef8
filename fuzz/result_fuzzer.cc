// result.json, read by callers, reports and `trtllm-run watch`: ResultFromJson, and
// ResultToJson, ExitCodeFor, FormatSummary and the JUnit report on what it accepted
// (its strings come from job output: any bytes).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trtllm_run/report.h"
#include "trtllm_run/result.h"

namespace {

std::string Rewrite(const std::string& json) {
  trtllm_run::Result<trtllm_run::RunResult> result = trtllm_run::ResultFromJson(json, "again.json");
  FUZZ_CHECK(result.ok());
  return trtllm_run::ResultToJson(result.value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::Result<trtllm_run::RunResult> result =
      trtllm_run::ResultFromJson(text, "fuzz_result.json");
  if (!result.ok()) {
    FUZZ_CHECK(result.status().message().find("fuzz_result.json") != std::string::npos);
    return 0;
  }
  std::string written = trtllm_run::ResultToJson(result.value());
  std::string again = Rewrite(written);
  if (trtllm_run_fuzz::IsValidUtf8(text)) FUZZ_CHECK(again == written);
  FUZZ_CHECK(Rewrite(again) == again);
  int code = trtllm_run::ExitCodeFor(result.value());
  FUZZ_CHECK(code >= 0 && code <= 130);
  (void)trtllm_run::FormatSummary(result.value());
  // JUnit XML holds no control characters other than tab, newline and carriage return
  // (XML 1.0 forbids them even escaped).
  for (char c : trtllm_run::ResultToJUnit(result.value())) {
    unsigned char u = static_cast<unsigned char>(c);
    FUZZ_CHECK(u >= 0x20 || c == '\t' || c == '\n' || c == '\r');
  }
  return 0;
}
