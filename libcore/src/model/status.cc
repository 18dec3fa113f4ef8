#include "trtllm_run/status.h"

namespace trtllm_run {

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string text = message_;
  if (!hint_.empty()) text += "\n  hint: " + hint_;
  return text;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_, hint_);
}

}  // namespace trtllm_run
