// SlurmWatcher (slurm_watch.h): remote job output copied into the local files that the
// followers read: the output stream (file_follow_stream.h) and, while it is down, one
// `tail -c` copy of all files per log interval.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "slurm/watch/slurm_watch_job.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/file_follow_stream.h"
#include "trtllm_run/sdk/slurm/watch.h"

namespace trtllm_run {

using internal::AppendFile;
using internal::Clock;
using internal::Dur;
using internal::Seconds;

namespace {

constexpr double kStreamStartLimitSeconds = 20;    // for its "S" line once ssh started
constexpr double kStreamSilenceLimitSeconds = 10;  // it beats once a second
constexpr double kStreamHealthySeconds = 10;       // then a restart counts as a first failure
constexpr double kStreamMaxBackoffSeconds = 30;
constexpr std::size_t kStreamPruneMinFiles = 16;  // restart to drop files of finished jobs

}  // namespace

bool SlurmWatcher::StreamUp() const { return stream_ && stream_->stream; }

int SlurmWatcher::StreamFd() const { return StreamUp() ? stream_->stream->fd() : -1; }

bool SlurmWatcher::AppendRemote(Job* job, bool is_err, std::uint64_t offset, std::uint64_t size,
                                const std::string& bytes) {
  std::uint64_t& held = is_err ? job->fetched_err : job->fetched_out;
  bool& truncate = is_err ? job->err_truncate : job->out_truncate;
  const std::string& local = is_err ? job->spec.local_err : job->spec.local_out;
  if (offset == 0 && size < held) {  // truncated or replaced: the copy starts again
    held = 0;
    truncate = true;
  }
  if (offset > held) return false;
  // A frame may repeat bytes a copy brought meanwhile: only what follows them is new.
  std::size_t skip = static_cast<std::size_t>(std::min<std::uint64_t>(held - offset, bytes.size()));
  if (skip == bytes.size() && !truncate) return true;
  std::string fresh = bytes.substr(skip);
  // A local write error repeats on every read; the verdict reports the missing output.
  if (!AppendFile(local, fresh, truncate)) return true;
  truncate = false;
  held += fresh.size();
  if (job->spec.echo_output && options_.terminal && !fresh.empty()) {
    if (options_.before_output) options_.before_output();
    options_.terminal->write(fresh.data(), static_cast<std::streamsize>(fresh.size()));
    options_.terminal->flush();
  }
  return true;
}

bool SlurmWatcher::CopyRemoteOutputs() {
  std::vector<SlurmClient::FileChunk> chunks;
  std::vector<std::pair<Job*, bool>> owners;  // (job, is_err)
  for (auto& job : jobs_) {
    if (job->done) continue;
    chunks.push_back({job->spec.out_path, job->fetched_out, -1, ""});
    owners.emplace_back(job.get(), false);
    if (!job->spec.err_path.empty()) {
      chunks.push_back({job->spec.err_path, job->fetched_err, -1, ""});
      owners.emplace_back(job.get(), true);
    }
  }
  if (!client_->FetchFiles(&chunks).ok()) return false;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    auto [job, is_err] = owners[i];
    const SlurmClient::FileChunk& chunk = chunks[i];
    if (chunk.size < 0) continue;  // not created yet
    if (static_cast<std::uint64_t>(chunk.size) < chunk.offset) {
      // Truncated or replaced: copied again from the start next time.
      (is_err ? job->fetched_err : job->fetched_out) = 0;
      (is_err ? job->err_truncate : job->out_truncate) = true;
      continue;
    }
    AppendRemote(job, is_err, chunk.offset, static_cast<std::uint64_t>(chunk.size), chunk.bytes);
  }
  return true;
}

void SlurmWatcher::StopStream(const std::string& problem, Clock::time_point now) {
  OutputStream& s = *stream_;
  s.stream.reset();
  ++s.failures;
  double backoff = s.failures <= 1
                       ? 0.0
                       : std::min(kStreamMaxBackoffSeconds,
                                  static_cast<double>(1 << std::min(s.failures, 8)) / 4);
  s.retry_at = now + Dur(backoff);
  if (s.failures == 1 || s.failures % 10 == 0) {
    Progress("remote output stream: " + problem + "; restarting it (copying the output every " +
             std::to_string(static_cast<int>(options_.log_interval + 0.5)) + "s meanwhile)");
  }
}

bool SlurmWatcher::FollowRemoteOutputs(Clock::time_point now) {
  if (!stream_) stream_ = std::make_unique<OutputStream>();
  OutputStream& s = *stream_;
  bool grew = false;
  if (s.stream) {
    std::vector<FollowFrame> frames;
    bool alive = s.stream->Read(&frames);
    std::string problem = alive ? "" : s.stream->problem();
    for (const FollowFrame& frame : frames) {
      if (frame.kind != FollowFrame::Kind::kChunk) continue;
      auto [job, is_err] = s.targets[frame.index];
      if (job->done) continue;
      if (!AppendRemote(job, is_err, frame.offset, frame.size, frame.bytes)) {
        problem = "bytes of " + (is_err ? job->spec.err_path : job->spec.out_path) +
                  " from offset " + std::to_string(frame.offset) + " do not join the " +
                  std::to_string(is_err ? job->fetched_err : job->fetched_out) + " held";
        break;
      }
      grew = true;
    }
    if (problem.empty() && !s.stream->started() &&
        Seconds(now - s.stream->started_at()) > kStreamStartLimitSeconds) {
      problem = "no answer " + std::to_string(static_cast<int>(kStreamStartLimitSeconds)) +
                "s after it was started";
    } else if (problem.empty() && s.stream->started() &&
               Seconds(now - s.stream->last_frame()) > kStreamSilenceLimitSeconds) {
      problem = "silent for " + std::to_string(static_cast<int>(kStreamSilenceLimitSeconds)) + "s";
    }
    if (!problem.empty()) {
      StopStream(problem, now);
    } else if (Seconds(now - s.stream->started_at()) > kStreamHealthySeconds) {
      s.failures = 0;
    }
  }
  // The files of the jobs still watched; a job's .err before its .out, so that the end
  // line arrives after the error output written before it.
  std::vector<std::pair<Job*, bool>> targets;
  for (auto& job : jobs_) {
    if (job->done) continue;
    if (!job->spec.err_path.empty()) targets.emplace_back(job.get(), true);
    targets.emplace_back(job.get(), false);
  }
  if (s.stream) {
    bool added = jobs_.size() != s.jobs_when_started;
    bool mostly_finished =
        s.targets.size() >= kStreamPruneMinFiles && 2 * targets.size() < s.targets.size();
    if (targets.empty() || added || mostly_finished) s.stream.reset();  // not a failure
  }
  if (!s.stream && !targets.empty() && now >= s.retry_at) {
    std::vector<FollowedFile> files;
    for (auto [job, is_err] : targets) {
      files.push_back({is_err ? job->spec.err_path : job->spec.out_path,
                       is_err ? job->fetched_err : job->fetched_out});
    }
    Result<std::unique_ptr<FileFollowStream>> started = FileFollowStream::Start(
        [this](const std::vector<std::string>& argv) { return client_->StartStream(argv); }, files);
    if (started.ok()) {
      s.stream = std::move(started.value());
      s.targets = std::move(targets);
      s.jobs_when_started = jobs_.size();
    } else {
      StopStream(started.status().message(), now);
    }
  }
  return grew;
}

bool SlurmWatcher::ReadRemoteOutputs(bool force, Clock::time_point now) {
  bool grew = client_->can_stream() && FollowRemoteOutputs(now);
  bool copy = force || now >= next_log_;
  if (StreamUp()) {
    // The stream brings every byte; a final copy only for a job that ended without its
    // end line (killed, cancelled), whose last bytes may still be on their way.
    copy = force && std::any_of(jobs_.begin(), jobs_.end(), [](const auto& job) {
             return !job->done && (job->terminal || job->purged || job->lost) &&
                    !(job->end_line && job->action == SlurmAction::kNone);
           });
  }
  if (copy) {
    next_log_ = now + Dur(options_.log_interval);
    grew = CopyRemoteOutputs() || grew;
  }
  return grew || force;
}

}  // namespace trtllm_run
