// trtllm-run list / logs: the work dirs under a repo root, and one work dir's log. Work
// dirs are untrusted input (docs/security.md): symlinks are never followed out of
// them and what they hold is printed with control characters escaped.
#include <fcntl.h>
#include <poll.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

#include "cli.h"
#include "model/json_util.h"
#include "model/workdir_files.h"
#include "runtime/cases_dir.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run::cli {
namespace {

namespace fs = std::filesystem;

struct Listed {
  std::string name, work_dir, workflow, scenario, job_id, status;
  std::time_t modified = 0;
};

// The repo root as `run` finds it: --repo-root, else the git top level above the cwd.
std::string RepoRootFor(const po::variables_map& vm) {
  std::error_code error;
  if (vm.count("repo-root")) return fs::absolute(vm["repo-root"].as<std::string>(), error);
  fs::path cwd = fs::current_path(error);
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return cwd.string();
}

std::optional<Listed> Describe(const std::string& dir, const std::string& name, std::time_t mtime) {
  Listed item;
  item.name = name;
  item.work_dir = dir;
  item.modified = mtime;
  if (IsCasesDir(dir)) {
    Result<CasesDirInfo> cases = InspectCasesDir(dir);
    if (!cases.ok()) return std::nullopt;
    item.workflow = "cases";
    int passed = 0;
    for (const CasesDirCase& one : cases->cases) {
      passed += one.status == "PASSED";
      if (item.scenario.find(one.scenario) == std::string::npos) {
        item.scenario += (item.scenario.empty() ? "" : ",") + one.scenario;
      }
    }
    item.status = cases->phase == "finished" ? std::to_string(passed) + "/" +
                                                   std::to_string(cases->cases.size()) + " PASSED"
                                             : cases->phase;
    return item;
  }
  Result<WorkDirInfo> info = InspectWorkDir(dir);
  if (!info.ok()) return std::nullopt;  // not a work dir
  item.workflow = info->spec.workflow_type;
  item.scenario = info->spec.scenario;
  if (info->state) item.job_id = info->state->job_id;
  if (info->result) {
    item.status = RunStatusName(info->result->status);
    auto job = info->result->details.find("job_id");
    if (item.job_id.empty() && job != info->result->details.end()) item.job_id = job->second;
  } else {
    item.status = WorkDirPhaseName(info->phase);
  }
  return item;
}

std::string Age(std::time_t modified) {
  long long seconds = std::max<long long>(0, std::time(nullptr) - modified);
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 7200) return std::to_string(seconds / 60) + "m";
  if (seconds < 172800) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string ListJson(const std::string& root, const std::vector<Listed>& items) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  str("work_dirs", root + "/work_dirs");
  w.Key("runs");
  w.StartArray();
  for (const Listed& item : items) {
    w.StartObject();
    str("name", item.name);
    str("work_dir", item.work_dir);
    str("workflow", item.workflow);
    str("scenario", item.scenario);
    str("job_id", item.job_id);
    str("status", item.status);
    w.Key("age_seconds");
    w.Int64(std::max<long long>(0, std::time(nullptr) - item.modified));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

constexpr std::size_t kChunkBytes = 65536;  // read and written at a time
// --tail N looks at most this far back from the log's end for the N lines.
constexpr std::uint64_t kMaxTailScanBytes = std::uint64_t{8} << 20;
// --json holds the text it prints: at most this much of the log.
constexpr std::uint64_t kMaxJsonLogBytes = kMaxWorkDirFileBytes;

// The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence.
std::size_t Utf8CompletePrefix(const std::string& bytes) {
  std::size_t end = bytes.size();
  std::size_t back = 0;
  while (back < 3 && back < end &&
         (static_cast<unsigned char>(bytes[end - 1 - back]) & 0xC0) == 0x80) {
    ++back;
  }
  if (back < end && static_cast<unsigned char>(bytes[end - 1 - back]) >= 0xC0)
    return end - back - 1;
  return end;
}

// Writes `bytes` with every line's control characters escaped; a last partial line is
// kept in `pending` until its newline comes (or `flush`), up to kChunkBytes: a longer one
// is written as it is, so memory stays bounded whatever the log holds.
void WriteEscaped(std::string_view bytes, std::string* pending, bool flush) {
  pending->append(bytes);
  std::size_t start = 0;
  while (true) {
    std::size_t newline = pending->find('\n', start);
    if (newline == std::string::npos) break;
    std::cout << EscapeControl(std::string_view(*pending).substr(start, newline - start)) << "\n";
    start = newline + 1;
  }
  pending->erase(0, start);
  if (pending->size() > kChunkBytes) {
    std::size_t complete = Utf8CompletePrefix(*pending);
    std::cout << EscapeControl(std::string_view(*pending).substr(0, complete));
    pending->erase(0, complete);
  }
  if (flush && !pending->empty()) {
    std::cout << EscapeControl(*pending) << "\n";
    pending->clear();
  }
  std::cout.flush();
}

// Hands the log's bytes from `offset` up to its end (at most `limit` bytes) to `sink` in
// chunks of kChunkBytes, stopping early once `cancel` is cancelled; returns the offset
// reached. The log is opened as OpenWorkDirFile allows (beneath the work dir, no symlink).
std::uint64_t PumpLog(const WorkDirInfo& info, std::uint64_t offset,
                      const std::function<void(std::string_view)>& sink,
                      const CancellationToken* cancel,
                      std::uint64_t limit = std::numeric_limits<std::uint64_t>::max()) {
  Result<int> fd = OpenWorkDirFile(info.work_dir, info.log_file, info.spec.work_dir);
  if (!fd.ok()) return offset;
  if (FileSizeOf(fd.value()) < offset) offset = 0;  // truncated: from the start again
  std::string buffer(kChunkBytes, '\0');
  std::uint64_t done = 0;
  while (done < limit && !(cancel && cancel->cancelled())) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, limit - done));
    ssize_t n = ::pread(fd.value(), buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sink(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
    done += static_cast<std::uint64_t>(n);
  }
  ::close(fd.value());
  return offset;
}

// Where the log's last `lines` lines start (TailStart, at most kMaxTailScanBytes back);
// its size in `size`.
std::uint64_t LogTailStart(const WorkDirInfo& info, std::size_t lines, std::uint64_t* size) {
  *size = 0;
  Result<int> fd = OpenWorkDirFile(info.work_dir, info.log_file, info.spec.work_dir);
  if (!fd.ok()) return 0;
  std::uint64_t start = TailStart(fd.value(), lines, kMaxTailScanBytes, size);
  ::close(fd.value());
  return start;
}

// The work dirs under <root>/work_dirs that Describe recognizes, most recent first.
std::vector<Listed> ListWorkDirs(const std::string& root) {
  const std::string parent = root + "/work_dirs";
  std::vector<Listed> items;
  std::error_code error;
  if (fs::is_directory(parent, error)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(parent, error)) {
      struct stat st;  // lstat: a symlink is never listed, so never followed
      const std::string dir = entry.path().string();
      if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      std::optional<Listed> item = Describe(dir, entry.path().filename().string(), st.st_mtime);
      if (item) items.push_back(std::move(*item));
    }
  }
  std::sort(items.begin(), items.end(), [](const Listed& a, const Listed& b) {
    return a.modified != b.modified ? a.modified > b.modified : a.name > b.name;
  });
  return items;
}

}  // namespace

Result<std::string> WorkDirArgument(const std::string& given) {
  std::error_code error;
  auto normal = [&](const std::string& path) {
    std::string dir = fs::absolute(path, error).lexically_normal().string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir;
  };
  if (given == kLastRun) {
    const std::string root = RepoRootFor({});
    std::vector<Listed> items = ListWorkDirs(root);
    if (items.empty()) {
      return Status::NotFound("@last: no work dirs under " + EscapeControl(root) + "/work_dirs",
                              "run a case first, or give a work dir's path");
    }
    return items.front().work_dir;
  }
  struct stat st;
  if (given.find('/') == std::string::npos && given != "." && given != ".." &&
      ::lstat(given.c_str(), &st) != 0) {
    // A name from `trtllm-run list`: a work dir of the checkout around the cwd.
    const std::string listed = RepoRootFor({}) + "/work_dirs/" + given;
    if (::lstat(listed.c_str(), &st) == 0) return normal(listed);
  }
  return normal(given);
}

int ListMain(int argc, char** argv) {
  po::options_description options("List");
  options.add_options()("repo-root", po::value<std::string>()->value_name("DIR"),
                        "list <DIR>/work_dirs (default: the git checkout above the current "
                        "directory, else the current directory)")(
      "limit", po::value<int>()->value_name("N")->default_value(20),
      "show the N most recent (0: all)")("json", po::bool_switch(),
                                         "print a JSON object {work_dirs, runs: [...]} instead");
  po::variables_map vm;
  if (std::optional<int> done = Parse("list", argc, argv, options, &vm)) return *done;
  const std::string root = RepoRootFor(vm);
  const std::string parent = root + "/work_dirs";
  std::error_code error;
  if (!fs::is_directory(parent, error) && vm.count("repo-root")) {
    return Fail("list", Status::NotFound("'" + EscapeControl(parent) + "' does not exist",
                                         "give the repo root that `trtllm-run run` used"));
  }
  std::vector<Listed> items = ListWorkDirs(root);
  int limit = vm["limit"].as<int>();
  if (limit > 0 && items.size() > static_cast<std::size_t>(limit)) items.resize(limit);
  if (vm["json"].as<bool>()) {
    std::cout << ListJson(root, items);
    return 0;
  }
  std::ostringstream out;
  out << std::left << std::setw(40) << "name" << std::setw(12) << "workflow" << std::setw(14)
      << "scenario" << std::setw(10) << "job id" << std::setw(16) << "status"
      << "age\n";
  for (const Listed& item : items) {
    auto shown = [](const std::string& text) { return text.empty() ? "-" : EscapeControl(text); };
    out << std::setw(40) << shown(item.name) << std::setw(12) << shown(item.workflow)
        << std::setw(14) << shown(item.scenario) << std::setw(10) << shown(item.job_id)
        << std::setw(16) << shown(item.status) << Age(item.modified) << "\n";
  }
  if (items.empty()) out << "(no work dirs under " << EscapeControl(parent) << ")\n";
  std::cout << out.str();
  return 0;
}

namespace {

// logs --json: the log's text (invalid UTF-8 replaced, so the document stays valid) and
// where it came from.
std::string LogJson(const std::string& work_dir, const WorkDirInfo& info, const std::string& text) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    const std::string valid = json::ValidUtf8(value);
    w.Key(key);
    w.String(valid.c_str(), static_cast<rapidjson::SizeType>(valid.size()));
  };
  w.StartObject();
  str("work_dir", work_dir);
  str("log_file", info.log_file);
  str("phase", WorkDirPhaseName(info.phase));
  str("text", text);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

int LogsMain(int argc, char** argv) {
  po::options_description options("Logs");
  options.add_options()("follow,f", po::bool_switch(),
                        "keep printing what the log gets until the run has its verdict")(
      "tail,n", po::value<int>()->value_name("N"), "print only the last N lines first")(
      "poll", DurationValue("0.25s"), "-f: the time between looks at the log")(
      "json", po::bool_switch(),
      "print {work_dir, log_file, phase, text} on stdout instead of the log (not with -f)");
  CommandUsage usage;
  usage.positional = "WORK_DIR";
  po::variables_map vm;
  if (std::optional<int> done = Parse("logs", argc, argv, options, &vm, usage)) return *done;
  if (vm.count("tail") && vm["tail"].as<int>() < 0)
    return UsageError("logs", "--tail (-n) must be >= 0");
  Result<double> poll_flag = DurationFlag(vm, "poll", /*fractions=*/true);
  if (!poll_flag.ok()) return Fail("logs", poll_flag.status());
  const bool json = vm["json"].as<bool>();
  if (json && vm["follow"].as<bool>()) {
    return UsageError("logs", "--json prints the log once: give --json or --follow (-f), not both");
  }
  Result<std::string> named = WorkDirArgument(Positional(vm));
  if (!named.ok()) return Fail("logs", named.status());
  const std::string work_dir = named.value();
  struct stat st;
  if (::lstat(work_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Fail("logs", Status::NotFound("work dir '" + EscapeControl(work_dir) +
                                             "' does not exist (or is a symlink)",
                                         "`trtllm-run list` shows the work dirs of a repo"));
  }
  Result<WorkDirInfo> info = InspectWorkDir(work_dir);
  if (!info.ok()) {
    return Fail("logs",
                Status::InvalidInput("'" + EscapeControl(work_dir) +
                                     "' is not a trtllm-run work dir: " + info.status().message()));
  }
  if (info->log_file.empty()) {
    return Fail("logs", Status::InvalidInput(info->log_refused.empty() ? "the run has no log file"
                                                                       : info->log_refused,
                                             "logs reads only a regular file inside the work dir"));
  }
  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  std::uint64_t offset = 0;
  if (vm.count("tail")) {  // the last N lines, found from the end: the file is not read
    const std::size_t lines = static_cast<std::size_t>(vm["tail"].as<int>());
    std::uint64_t size = 0;
    offset = LogTailStart(info.value(), lines, &size);
    if (size - offset >= kMaxTailScanBytes && lines > 0) {
      std::cerr << "trtllm-run logs: the last " << lines << " lines start more than "
                << (kMaxTailScanBytes >> 20) << " MiB before the log's end; showing its last "
                << (kMaxTailScanBytes >> 20) << " MiB\n";
    }
  }
  if (json) {
    std::string text;
    PumpLog(
        info.value(), offset,
        [&](std::string_view bytes) {
          if (text.size() <= kMaxJsonLogBytes) text.append(bytes);
        },
        &cancel, kMaxJsonLogBytes + 1);
    if (cancel.cancelled()) return kExitUserInterrupt;
    if (text.size() > kMaxJsonLogBytes) {
      return Fail("logs", Status::InvalidInput(
                              "the log " + EscapeControl(info->log_file) + " is over " +
                                  std::to_string(kMaxJsonLogBytes >> 20) +
                                  " MiB from where it would be printed; --json prints at most " +
                                  std::to_string(kMaxJsonLogBytes >> 20) + " MiB",
                              "add --tail N, or leave out --json to stream the whole log"));
    }
    std::cout << LogJson(work_dir, info.value(), text);
    return 0;
  }
  const bool follow = vm["follow"].as<bool>();
  std::string pending;
  auto write = [&](std::string_view bytes) { WriteEscaped(bytes, &pending, false); };
  offset = PumpLog(info.value(), offset, write, &cancel);
  if (!follow && !cancel.cancelled()) {
    WriteEscaped("", &pending, true);
    return 0;
  }
  const double poll = std::max(0.01, poll_flag.value());
  while (!cancel.cancelled()) {
    Result<WorkDirInfo> now = InspectWorkDir(work_dir);
    if (!now.ok()) return Fail("logs", now.status());
    offset = PumpLog(now.value(), offset, write, &cancel);
    bool over = now->phase == WorkDirPhase::kFinished || now->phase == WorkDirPhase::kAbandoned;
    if (over && !cancel.cancelled()) {
      WriteEscaped("", &pending, true);
      return 0;
    }
    pollfd woken{cancel.wait_fd(), POLLIN, 0};  // the poll interval, or a signal
    ::poll(&woken, 1, static_cast<int>(poll * 1000));
  }
  WriteEscaped("", &pending, true);
  return kExitUserInterrupt;
}

}  // namespace trtllm_run::cli
