// Cases files of `run --cases` (YAML/JSON lists and mappings, plain lists of test ids and
// commands): ParseCasesText. Besides no crash and no hang (alias bombs, long lines, deep
// nesting), a UTF-8 byte order mark never changes how a file is read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/sdk/input_limits.h"

namespace {

const char kOrigin[] = "fuzz_cases.txt";

// What a case runs, to compare two readings of the same file.
std::string Commands(const std::vector<trtllm_run::CaseEntry>& cases) {
  std::string text;
  for (const trtllm_run::CaseEntry& entry : cases) {
    const trtllm_run::CaseRequest& r = entry.request;
    text += entry.origin + "|" + entry.name + "|" + r.test_cmd.value_or("-") + "|" +
            r.custom_cmd.value_or("-") + "|" + r.bench_cmd.value_or("-") + "|" +
            r.eval_cmd.value_or("-") + "\n";
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::CaseRequest shared;
  trtllm_run::Result<std::vector<trtllm_run::CaseEntry>> cases =
      trtllm_run::ParseCasesText(text, kOrigin, shared);
  if (cases.ok()) {
    FUZZ_CHECK(!cases->empty());
    for (const trtllm_run::CaseEntry& entry : cases.value()) {
      FUZZ_CHECK(entry.origin.rfind(kOrigin, 0) == 0);
      FUZZ_CHECK(!entry.request.slurm_password.has_value());
      (void)trtllm_run::ClassifyCommand(entry.request);
    }
  } else {
    FUZZ_CHECK(cases.status().code() == trtllm_run::StatusCode::kInvalidInput);
    FUZZ_CHECK(cases.status().message().find(kOrigin) != std::string::npos);
  }
  if (text.compare(0, 3, "\xEF\xBB\xBF") != 0 &&
      text.size() + 3 <= trtllm_run::kMaxCasesFileBytes) {
    trtllm_run::Result<std::vector<trtllm_run::CaseEntry>> with_bom =
        trtllm_run::ParseCasesText("\xEF\xBB\xBF" + text, kOrigin, shared);
    FUZZ_CHECK(with_bom.ok() == cases.ok());
    if (cases.ok()) FUZZ_CHECK(Commands(with_bom.value()) == Commands(cases.value()));
  }
  return 0;
}
