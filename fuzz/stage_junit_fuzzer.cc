// pytest JUnit files as `trtllm-run stage` reads them back (stage/stage_junit.h ParseJUnit,
// over the strict XML reader stage/xml_reader.h): no crash on any input, errors name the
// file, and what was read merges into a stage JUnit that reads back with the same cases.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "stage/stage_junit.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  auto cases = trtllm_run::stage::ParseJUnit(text, "fuzz_junit.xml");
  if (!cases.ok()) {
    FUZZ_CHECK(cases.status().code() == trtllm_run::StatusCode::kInvalidInput);
    FUZZ_CHECK(cases.status().message().find("fuzz_junit.xml") != std::string::npos);
    return 0;
  }
  for (const trtllm_run::stage::JUnitCase& c : cases.value()) {
    FUZZ_CHECK(c.seconds >= 0);
    FUZZ_CHECK(c.details.size() <= trtllm_run::stage::kMaxDetailsBytes + 64);
  }
  // Merged into a stage's JUnit (every case a test of its own), it reads back: one case per
  // test, in order.
  std::vector<trtllm_run::stage::StageTestResult> tests;
  trtllm_run::stage::AddAttempts(cases.value(), 1, &tests);
  const std::string merged = trtllm_run::stage::StageJUnit("fuzz-stage", tests);
  auto back = trtllm_run::stage::ParseJUnit(merged, "merged.xml");
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back->size() == tests.size());
  return 0;
}
