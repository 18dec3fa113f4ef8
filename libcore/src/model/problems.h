// ProblemList: several independent problems of one input, reported together in one
// Status, so that a user fixes them all in one round instead of one per run.
#ifndef TRTLLM_RUN_MODEL_PROBLEMS_H_
#define TRTLLM_RUN_MODEL_PROBLEMS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {

class ProblemList {
 public:
  // Records `status` when it is not OK; returns whether it was OK.
  bool Add(const Status& status);
  bool empty() const { return problems_.empty(); }
  std::size_t size() const { return problems_.size(); }
  const std::vector<Status>& problems() const { return problems_; }

  // OK when there is no problem; the problem itself when there is one; else one Status
  // whose message is "<N> problems <what>:" followed by each problem (message and hint)
  // numbered on its own lines. Its code is kInvalidInput when every problem is bad input
  // (kInvalidInput or kNotFound), else the first other problem's code.
  Status ToStatus(const std::string& what) const;

 private:
  std::vector<Status> problems_;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_PROBLEMS_H_
