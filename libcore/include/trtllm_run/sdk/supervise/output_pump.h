// OutputPump: moves a job's output, as it arrives, into its log file and (optionally) to
// a terminal stream. Every executor that runs a job on this host copies output through
// one, so that a failed write is reported the same way everywhere and never dropped.
#ifndef TRTLLM_RUN_SDK_SUPERVISE_OUTPUT_PUMP_H_
#define TRTLLM_RUN_SDK_SUPERVISE_OUTPUT_PUMP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// Not thread-safe: one pump per job, used from one thread.
class TRTLLM_RUN_API OutputPump {
 public:
  // `terminal` null: the output goes to the log only.
  OutputPump(std::string log_path, std::ostream* terminal);
  ~OutputPump();  // closes the log
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // Opens (creates) the log for appending; `truncate`: it starts empty. kIoError naming
  // the path when it cannot be opened.
  Status Open(bool truncate = true);

  // Called before every write to the terminal (e.g. to erase a live progress line).
  void set_before_terminal_write(std::function<void()> hook) { before_terminal_ = std::move(hook); }

  // Writes `bytes` to the log, then to the terminal. The first failure of each sink is
  // recorded in errors() (naming the sink, the OS error and that later output is missing
  // there); that sink is not written again, the other one still is. False when the log
  // write failed (now or before).
  bool Write(const std::string& bytes);

  // Moves what `child` has written so far (without blocking) through Write(). A read
  // error is recorded in errors() and closes the child's output. Returns the last read
  // state (kEof once the pipe is closed).
  ReadState Drain(ChildProcess* child);

  void Close();  // closes the log; idempotent

  // What went wrong so far, one message per failed sink or read error.
  const std::vector<std::string>& errors() const { return errors_; }
  // Bytes that reached the log file.
  std::uint64_t log_bytes_written() const { return log_bytes_written_; }
  const std::string& log_path() const { return log_path_; }

 private:
  std::string log_path_;
  std::ostream* terminal_;
  std::function<void()> before_terminal_;
  int log_fd_ = -1;
  bool log_failed_ = false;
  bool terminal_failed_ = false;
  std::uint64_t log_bytes_written_ = 0;
  std::vector<std::string> errors_;
  std::string buffer_;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SUPERVISE_OUTPUT_PUMP_H_
