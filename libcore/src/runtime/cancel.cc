#include "trtllm_run/cancel.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace trtllm_run {

namespace {

// The token the installed handlers cancel. Only one ScopedSignalCancellation is alive.
std::atomic<CancellationToken*> g_signal_token{nullptr};

void OnSignal(int signal) {
  int saved_errno = errno;
  CancellationToken* token = g_signal_token.load();
  if (token != nullptr) token->Cancel(signal);
  errno = saved_errno;
}

}  // namespace

CancellationToken::CancellationToken() {
  if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    pipe_[0] = pipe_[1] = -1;
  }
}

CancellationToken::~CancellationToken() {
  for (int fd : pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

void CancellationToken::Cancel(int signal) {
  bool expected = false;
  if (!cancelled_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) return;
  signal_.store(signal, std::memory_order_release);
  if (pipe_[1] >= 0) {
    char byte = 1;
    ssize_t ignored = ::write(pipe_[1], &byte, 1);  // wakes poll(); a full pipe is fine
    (void)ignored;
  }
}

ScopedSignalCancellation::ScopedSignalCancellation(CancellationToken* token,
                                                   std::initializer_list<int> signals)
    : signals_(signals) {
  g_signal_token.store(token);
  for (int signal : signals_) {
    struct sigaction action {};
    action.sa_handler = OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    auto* previous = new struct sigaction();
    ::sigaction(signal, &action, previous);
    previous_.push_back(previous);
  }
}

ScopedSignalCancellation::~ScopedSignalCancellation() {
  for (size_t i = 0; i < signals_.size(); ++i) {
    auto* previous = static_cast<struct sigaction*>(previous_[i]);
    ::sigaction(signals_[i], previous, nullptr);
    delete previous;
  }
  g_signal_token.store(nullptr);
}

}  // namespace trtllm_run
