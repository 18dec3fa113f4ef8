// --reuse-passed (`stage`, `run --cases`): tests that passed on the same commit (and the
// same stage, for a stage) in the history are SKIPPED with the reason "passed on <commit>
// at <time> (<work dir>)", as TensorRT-LLM's CI adds the tests a previous pipeline of the
// same commit passed to the stage's waive list (reusePassedTestResults, L0_Test.groovy).
// Backend-free: it reads HistoryStore's latest outcomes (history_store.h).
#ifndef TRTLLM_RUN_HISTORY_REUSE_PASSED_H_
#define TRTLLM_RUN_HISTORY_REUSE_PASSED_H_

#include <map>
#include <string>
#include <vector>

#include "history/history_store.h"

namespace trtllm_run::history {

// "passed on <commit> at <recorded_at> (<work_dir>)".
std::string ReusedReason(const std::string& commit, const LatestOutcome& pass);

// Which of `ids` passed before, each with its ReusedReason. `latest` are the newest outcomes
// on `commit` (HistoryStore::LatestTestOutcomes or LatestCaseVerdicts). Matching is by exact
// string, never by pattern:
//   - an id with an outcome of its own is reused when that newest outcome is a pass
//     ("passed", or the verdict "PASSED");
//   - an id with none (a test-list line that pytest expanded into several tests: a file, a
//     directory, a `-k`/`-m` line, recorded as "<id>::<name>") is reused when tests
//     "<id>::..." were recorded and the newest outcome of every one of them is a pass; the
//     newest of them names the time and work dir.
// A skipped or failed newest outcome, or no record, is never reused.
std::map<std::string, std::string> PassedBefore(const std::vector<std::string>& ids,
                                                const std::vector<LatestOutcome>& latest,
                                                const std::string& commit);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_REUSE_PASSED_H_
