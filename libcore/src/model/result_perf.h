// result.json's "perf" section (docs/result-schema.md "perf"): writing and reading it.
#ifndef TRTLLM_RUN_MODEL_RESULT_PERF_H_
#define TRTLLM_RUN_MODEL_RESULT_PERF_H_

#include <string>

#include "model/json_util.h"
#include "trtllm_run/result.h"

namespace trtllm_run {

// Writes `perf` as the value of the current key, numbers at full precision.
void WritePerfSection(json::Writer* writer, const PerfSection& perf);

// Reads a "perf" object; kInvalidInput naming `origin` and the key for a wrong shape.
Status ReadPerfSection(const rapidjson::Value& value, const std::string& origin, PerfSection* perf);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_RESULT_PERF_H_
