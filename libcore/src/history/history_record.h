// Turning verdicts into history rows (history_store.h), and where the store is.
#ifndef TRTLLM_RUN_HISTORY_HISTORY_RECORD_H_
#define TRTLLM_RUN_HISTORY_HISTORY_RECORD_H_

#include <string>
#include <vector>

#include "history/history_store.h"
#include "trtllm_run/result.h"

namespace trtllm_run {
struct StageRunResult;  // stage/stage_run.h
}  // namespace trtllm_run

namespace trtllm_run::history {

// "$XDG_DATA_HOME/trtllm-run/history.sqlite", else
// "$HOME/.local/share/trtllm-run/history.sqlite"; "" when neither variable is set.
std::string DefaultHistoryPath();

// The checkout's HEAD, read from its .git without running git (worktrees and packed refs
// included): commit "" when `repo_root` is not a git checkout, branch "" when detached.
struct GitHead {
  std::string commit;
  std::string branch;
};
GitHead ReadGitHead(const std::string& repo_root);

// A failure text's signature, stable across runs: its first non-empty line, numbers and
// hex addresses as "N", whitespace collapsed, at most 160 bytes. "" for no text.
std::string FailureSignature(const std::string& text);

// The record of one case's verdict: `kind` "run" or "case", `name` the case's name ("":
// its command). Where it ran comes from its work dir's job_spec.json when there is one.
CaseRecord CaseRecordOf(const RunResult& result, const std::string& kind, const std::string& name);

// The records of a stage: one per shard job of every round (StageRunResult::shard_runs),
// each with the outcomes of its tests in that round (attempt = the round).
std::vector<CaseRecord> StageRecordsOf(const StageRunResult& stage);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_HISTORY_RECORD_H_
