// CancellationToken: a one-shot "stop now" flag that signal handlers may set and that
// event loops can poll() alongside their other file descriptors.
#ifndef TRTLLM_RUN_CANCEL_H_
#define TRTLLM_RUN_CANCEL_H_

#include <atomic>
#include <initializer_list>
#include <vector>

#include "trtllm_run/export.h"

namespace trtllm_run {

class TRTLLM_RUN_API CancellationToken {
 public:
  CancellationToken();
  ~CancellationToken();
  CancellationToken(const CancellationToken&) = delete;
  CancellationToken& operator=(const CancellationToken&) = delete;

  // Requests cancellation; `signal` is the signal that caused it (0: from code).
  // Async-signal-safe; only the first call records its signal.
  void Cancel(int signal = 0);
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  int signal() const { return signal_.load(std::memory_order_acquire); }

  // Becomes readable once Cancel() was called; never read from it.
  int wait_fd() const { return pipe_[0]; }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<int> signal_{0};
  int pipe_[2] = {-1, -1};
};

// While alive, the given signals cancel `token` instead of their default action.
// The previous handlers are restored on destruction. One instance at a time per process.
class TRTLLM_RUN_API ScopedSignalCancellation {
 public:
  ScopedSignalCancellation(CancellationToken* token, std::initializer_list<int> signals);
  ~ScopedSignalCancellation();
  ScopedSignalCancellation(const ScopedSignalCancellation&) = delete;
  ScopedSignalCancellation& operator=(const ScopedSignalCancellation&) = delete;

 private:
  std::vector<int> signals_;
  std::vector<void*> previous_;  // struct sigaction*, owned
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_CANCEL_H_
