// Status and Result<T>: errors as values at the library's edges.
//
// A Status is either OK or carries a code, a message naming what is wrong (the flag,
// file, value) and, where known, a hint saying what would be valid or how to fix it.
// Embedding tools can call the whole public API without try/catch.
//
// Both types are [[nodiscard]]: a call whose Status or Result is dropped does not compile
// (warnings are errors); `Call().IgnoreError();` marks the few places that drop one on
// purpose.
#ifndef TRTLLM_RUN_STATUS_H_
#define TRTLLM_RUN_STATUS_H_

#include <optional>
#include <string>
#include <utility>

#include "trtllm_run/export.h"

namespace trtllm_run {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,    // bad flag, request field, file content: the caller must change the input
  kNotFound,        // a named file, plugin or executor does not exist
  kPluginError,     // a plugin could not be loaded or is incompatible
  kIoError,         // reading or writing a file failed
  kExecutionError,  // starting or supervising a process failed (infrastructure)
  kInternal,        // a bug in trtllm-run
};

// Exported member by member: a class-level visibility attribute cannot stand beside
// [[nodiscard]].
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string message, std::string hint = "") {
    return Status(StatusCode::kInvalidInput, std::move(message), std::move(hint));
  }
  static Status NotFound(std::string message, std::string hint = "") {
    return Status(StatusCode::kNotFound, std::move(message), std::move(hint));
  }
  static Status PluginError(std::string message, std::string hint = "") {
    return Status(StatusCode::kPluginError, std::move(message), std::move(hint));
  }
  static Status IoError(std::string message, std::string hint = "") {
    return Status(StatusCode::kIoError, std::move(message), std::move(hint));
  }
  static Status ExecutionError(std::string message, std::string hint = "") {
    return Status(StatusCode::kExecutionError, std::move(message), std::move(hint));
  }
  static Status Internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message), "");
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

  // "message (hint)" style single string for logs and the CLI: "<message>\n  hint: <hint>".
  TRTLLM_RUN_API std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  TRTLLM_RUN_API Status WithContext(const std::string& context) const;

  // Drops this Status on purpose: best-effort cleanup whose failure changes nothing for
  // the caller (closing a connection, cancelling what may already be gone).
  void IgnoreError() const {}

 private:
  Status(StatusCode code, std::string message, std::string hint)
      : code_(code), message_(std::move(message)), hint_(std::move(hint)) {}

  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string hint_;
};

// A value or the Status explaining why there is none. A Result is OK exactly when it holds
// a value: built from an OK Status (which has no value to carry) it is not OK but
// kInternal, "Result built from an OK Status without a value", so a caller that checks
// ok() never reads a missing value. (A compile-time refusal is not possible: an OK and an
// error Status are the same type.)
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status)                          // NOLINT: implicit by design
      : status_(status.ok() ? Status::Internal("Result built from an OK Status without a value")
                            : std::move(status)) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  void IgnoreError() const {}  // as Status::IgnoreError
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace trtllm_run

// Propagates a non-OK Status to the caller.
#define TRTLLM_RUN_RETURN_IF_ERROR(expr)   \
  do {                                     \
    ::trtllm_run::Status status_ = (expr); \
    if (!status_.ok()) return status_;     \
  } while (0)

#endif  // TRTLLM_RUN_STATUS_H_
