#include "model/problems.h"

namespace trtllm_run {

bool ProblemList::Add(const Status& status) {
  if (status.ok()) return true;
  problems_.push_back(status);
  return false;
}

Status ProblemList::ToStatus(const std::string& what) const {
  if (problems_.empty()) return Status::Ok();
  if (problems_.size() == 1) return problems_.front();
  std::string message = std::to_string(problems_.size()) + " problems " + what + ":";
  const Status* other = nullptr;
  int number = 0;
  for (const Status& problem : problems_) {
    std::string item = problem.message();
    if (!problem.hint().empty()) item += "\n     hint: " + problem.hint();
    std::string indented;
    for (char c : item) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    message += "\n  " + std::to_string(++number) + ". " + indented;
    bool input =
        problem.code() == StatusCode::kInvalidInput || problem.code() == StatusCode::kNotFound;
    if (!input && other == nullptr) other = &problem;
  }
  if (other == nullptr) return Status::InvalidInput(message);
  switch (other->code()) {
    case StatusCode::kPluginError:
      return Status::PluginError(message);
    case StatusCode::kIoError:
      return Status::IoError(message);
    case StatusCode::kExecutionError:
      return Status::ExecutionError(message);
    default:
      return Status::Internal(message);
  }
}

}  // namespace trtllm_run
