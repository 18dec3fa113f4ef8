#include "trtllm_run/workdir_state.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "model/json_util.h"

namespace trtllm_run {
namespace {

constexpr std::size_t kTailWindowBytes = 32768;  // ReadLastLines reads this much at most
constexpr std::size_t kMaxLineBytes = 400;       // of one line it returns

std::uint64_t SizeOf(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

}  // namespace

std::vector<std::string> ReadLastLines(const std::string& dir, const std::string& path, int count,
                                       const std::string& recorded_dir) {
  std::vector<std::string> lines;
  if (count <= 0 || path.empty()) return lines;
  Result<int> opened = OpenWorkDirFile(dir, path, recorded_dir);
  if (!opened.ok()) return lines;
  const int fd = opened.value();
  const std::uint64_t size = SizeOf(fd);
  const std::uint64_t start = size > kTailWindowBytes ? size - kTailWindowBytes : 0;
  std::string text(static_cast<std::size_t>(size - start), '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), static_cast<off_t>(start));
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::istringstream stream(text);
  bool first = true;
  for (std::string line; std::getline(stream, line); first = false) {
    if (first && start > 0) continue;  // the window may start mid-line
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.size() > kMaxLineBytes) line = line.substr(0, kMaxLineBytes) + "...";
    lines.push_back(json::ValidUtf8(line));
  }
  if (lines.size() > static_cast<std::size_t>(count)) {
    lines.erase(lines.begin(), lines.end() - count);
  }
  return lines;
}

std::uint64_t WorkDirFileSize(const std::string& dir, const std::string& path,
                              const std::string& recorded_dir) {
  if (path.empty()) return 0;
  Result<int> opened = OpenWorkDirFile(dir, path, recorded_dir);
  if (!opened.ok()) return 0;
  const std::uint64_t size = SizeOf(opened.value());
  ::close(opened.value());
  return size;
}

JobDescription DescribeWorkDirJob(const Registry& registry, const WorkDirInfo& info) {
  JobDescription none;
  if (info.phase == WorkDirPhase::kFinished || !info.same_host) return none;
  Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor(info.spec.scenario);
  if (!executor.ok()) {
    none.problem = "the executor was not asked: " + executor.status().ToString();
    return none;
  }
  try {
    return executor.value()->DescribeJob(info.spec, info.state ? &*info.state : nullptr);
  } catch (const std::exception& e) {
    none.problem = "executor " + info.spec.scenario + " could not describe the job: " + e.what();
  } catch (...) {
    none.problem = "executor " + info.spec.scenario + " could not describe the job";
  }
  return none;
}

Result<WorkDirState> ReadWorkDirState(const std::string& work_dir,
                                      const WorkDirStateOptions& options) {
  std::error_code error;
  if (!std::filesystem::is_directory(work_dir, error)) {
    return Status::NotFound("work dir '" + work_dir + "' does not exist",
                            "give a directory under <repo>/work_dirs/ made by trtllm-run");
  }
  Result<WorkDirInfo> inspected = InspectWorkDir(work_dir);
  if (!inspected.ok()) {
    return Status::InvalidInput(
        "'" + work_dir + "' is not a trtllm-run work dir: " + inspected.status().message(),
        "a work dir holds job_spec.json, written when a case is prepared");
  }
  WorkDirState state;
  state.info = std::move(inspected.value());
  const WorkDirInfo& info = state.info;
  if (info.state) {
    state.job_id = info.state->job_id;
    state.container_name = info.state->container_name;
    state.started_at = info.state->started_at;
  }
  if (state.job_id.empty() && info.result) {
    auto job = info.result->details.find("job_id");
    if (job != info.result->details.end()) state.job_id = job->second;
  }
  if (state.container_name.empty()) state.container_name = info.spec.container_name;
  state.log_bytes = WorkDirFileSize(info.work_dir, info.log_file, info.spec.work_dir);
  state.last_lines =
      ReadLastLines(info.work_dir, info.log_file, options.log_lines, info.spec.work_dir);
  if (options.registry != nullptr && info.phase != WorkDirPhase::kFinished && info.same_host) {
    state.described = true;
    state.job = DescribeWorkDirJob(*options.registry, info);
    state.describe_problem = state.job.problem;
  }
  return state;
}

}  // namespace trtllm_run
