// The proof `trtllm-run cancel` asks for before it scancels a job a work dir names
// (slurm_run.h ProveSlurmJobOwnership): the controller's own record of the job must show
// the caller's uid, the token trtllm-run gave the job at submit, and an output path
// under the work dir. A work dir is only a claim; the controller's record is the proof.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/dir_util.h"
#include "slurm/watch/slurm_watch_job.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const char kSlurmJobTokenFile[] = "slurm_job_token";
const char kSlurmJobCommentPrefix[] = "trtllm-run:";

namespace {

namespace fs = std::filesystem;
using internal::SplitLines;

bool IsToken(const std::string& text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The uid of scontrol's "UserId=name(1001)"; "" when it carries none.
std::string UidOf(const std::string& user_id) {
  std::size_t open = user_id.rfind('(');
  if (open == std::string::npos || user_id.back() != ')') return "";
  std::string uid = user_id.substr(open + 1, user_id.size() - open - 2);
  if (uid.empty() || uid.find_first_not_of("0123456789") != std::string::npos) return "";
  return uid;
}

// `path` is `dir` or lies beneath it (both absolute; ".." never escapes: the path is
// normalized first).
bool Beneath(const std::string& path, const std::string& dir) {
  if (path.empty() || dir.empty() || path[0] != '/') return false;
  std::string normal = fs::path(path).lexically_normal().string();
  std::string base = fs::path(dir).lexically_normal().string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return normal.size() > base.size() && normal.compare(0, base.size(), base) == 0 &&
         normal[base.size()] == '/';
}

std::string Clipped(const std::string& text) {
  return text.size() <= 200 ? text : text.substr(0, 200) + "...";
}

}  // namespace

std::string NewSlurmJobToken() {
  unsigned char bytes[16] = {};
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  std::size_t have = 0;
  while (fd >= 0 && have < sizeof bytes) {
    ssize_t n = ::read(fd, bytes + have, sizeof bytes - have);
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (fd >= 0) ::close(fd);
  if (have < sizeof bytes) return "";
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

Status ProveSlurmJobOwnership(SlurmClient* client, const JobSpec& spec, const std::string& job_id) {
  const std::string what = "Slurm job " + job_id + " recorded in " + spec.work_dir;
  Result<SlurmClient::JobsSnapshot> snapshot = client->QueryJobs({job_id});
  if (!snapshot.ok()) {
    return snapshot.status().WithContext("asking the controller whether " + what +
                                         " is this run's; nothing was cancelled");
  }
  const SlurmJobRecord* record = nullptr;
  for (const SlurmJobRecord& one : snapshot->records) {
    if (one.job_id == job_id) record = &one;
  }
  if (record == nullptr) {
    return Status::NotFound("the controller no longer knows " + what +
                            ": it ended and was purged (or never existed); nothing to cancel");
  }

  // Who asks, and the work dir as the controller's side sees it (physical path: sbatch
  // made the relative output path absolute from its working directory).
  const std::string dir = client->remote() ? spec.remote_work_dir : spec.work_dir;
  Result<CommandOutput> whoami = client->Run(
      {"sh", "-c", "id -u && { readlink -f -- \"$1\" || true; }", "trtllm-run-owner", dir});
  if (!whoami.ok() || whoami->exit_code != 0) {
    return Status::ExecutionError("cannot tell who runs `trtllm-run cancel` (id -u) " +
                                  std::string(client->remote() ? "on the login node" : "here") +
                                  ": " +
                                  (whoami.ok() ? whoami->stderr_text : whoami.status().message()) +
                                  "; nothing was cancelled");
  }
  std::vector<std::string> lines = SplitLines(whoami->stdout_text, 4);
  const std::string caller_uid = lines.empty() ? "" : std::string(Trim(lines[0]));
  const std::string physical_dir = lines.size() > 1 ? std::string(Trim(lines[1])) : "";

  std::vector<std::string> mismatches;
  if (caller_uid.empty() || UidOf(record->user_id) != caller_uid) {
    mismatches.push_back("its owner is UserId=" + Clipped(record->user_id) +
                         ", not the caller (uid " + caller_uid + ")");
  }
  Result<std::string> token_text = ReadWorkDirFile(spec.work_dir + "/" + kSlurmJobTokenFile);
  const std::string token = token_text.ok() ? std::string(Trim(token_text.value())) : "";
  if (!IsToken(token)) {
    mismatches.push_back(
        spec.work_dir + "/" + kSlurmJobTokenFile +
        (token_text.ok() ? " holds no token (32 hex digits)"
                         : " is missing or unreadable (" + token_text.status().message() + ")") +
        ", so nothing ties the job to this work dir");
  } else if (record->comment != kSlurmJobCommentPrefix + token) {
    mismatches.push_back("its Comment is '" + Clipped(record->comment) +
                         "', not the token recorded at submit in " + spec.work_dir + "/" +
                         kSlurmJobTokenFile);
  }
  if (!Beneath(record->std_out, dir) && !Beneath(record->std_out, physical_dir)) {
    mismatches.push_back("its StdOut " + Clipped(record->std_out) + " is not under " + dir);
  }
  if (mismatches.empty()) return Status::Ok();
  return Status::InvalidInput(
      "refusing to cancel " + what + ": the controller's record does not show it is this " +
          "run's job: " + Join(mismatches, "; ") + "; nothing was cancelled",
      "trtllm-run cancels only the job it submitted from this work dir; if job " + job_id +
          " is yours, stop it with `scancel " + job_id + "`");
}

}  // namespace trtllm_run
