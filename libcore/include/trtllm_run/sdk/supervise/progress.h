// Progress of a running job for people: on a terminal one live line, rewritten in place
// ("\r"), with the state, elapsed time, time limit and the last log line; elsewhere (CI
// logs, files) plain lines when the state changes and a heartbeat now and then. Progress
// goes to the progress stream only, never into the job's output or its log.
#ifndef TRTLLM_RUN_SDK_SUPERVISE_PROGRESS_H_
#define TRTLLM_RUN_SDK_SUPERVISE_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>

#include "trtllm_run/export.h"

namespace trtllm_run {

struct ProgressSnapshot {
  std::string state;  // "starting", "running", "stopping", ...
  double elapsed_seconds = 0;
  int time_limit_seconds = 0;  // 0: none
  std::string last_line;       // the last log line (control characters are dropped)
};

// True when `stream` is std::cout, std::cerr or std::clog and its file descriptor is a
// terminal (and $TERM is not "dumb").
TRTLLM_RUN_API bool IsTerminalStream(const std::ostream* stream);

// The columns of the terminal behind `stream` (std::cout, std::cerr), else 80.
TRTLLM_RUN_API std::size_t TerminalWidth(const std::ostream* stream);

// "[name] running 1m05s / 1h limit | <job> | <last line>", cut to `width` columns (0: no
// limit). `job` names what runs, e.g. "pid 123" or "job 42 RUNNING" (id and scheduler
// state); empty: left out.
TRTLLM_RUN_API std::string FormatProgressLine(const std::string& name,
                                              const ProgressSnapshot& snapshot, std::size_t width,
                                              const std::string& job = "");

// Not thread-safe.
class TRTLLM_RUN_API ProgressReporter {
 public:
  // `out` null: quiet. `live`: out is a terminal; keep one line updated in place.
  // `heartbeat_seconds`: plain mode repeats the line this often while nothing changes.
  ProgressReporter(std::ostream* out, bool live, std::string name, double heartbeat_seconds = 60);
  ~ProgressReporter();  // clears the live line
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Live: redraws the line (at most 4 times a second). Plain: prints a line when the
  // state changed or a heartbeat is due.
  void Update(const ProgressSnapshot& snapshot);

  // What runs, shown in every later line (FormatProgressLine's `job`).
  void SetJob(std::string job) { job_ = std::move(job); }

  // An event ("sent SIGTERM ..."): always its own line, "[name] <line>"; the live line
  // is cleared first and redrawn by the next Update.
  void Message(const std::string& line);

  // Erases the live line, e.g. before job output is written to the same terminal.
  void Clear();

  bool live() const { return live_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream* out_;
  bool live_;
  std::string name_;
  std::string job_;
  double heartbeat_seconds_;
  bool shown_ = false;  // a live line is on the screen
  std::string last_state_;
  Clock::time_point last_draw_{};
  bool drawn_once_ = false;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SUPERVISE_PROGRESS_H_
