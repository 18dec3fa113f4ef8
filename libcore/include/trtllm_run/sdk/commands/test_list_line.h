// One line of a TensorRT-LLM test list (tests/integration/test_lists/qa/*.txt, the
// `tests:` of a test-db YAML, waives.txt), as the repo's test_list_parser.py reads it:
//
//   [full:<GPU>/]<test id> [-k "<expr>"] [-m "<expr>"] [SKIP|XFAIL|UNSTABLE [(<reason>)]]
//                          [TIMEOUT (<minutes>)] [ISOLATION]
//
// The selectors and markers may come in any order after the id. The id is a pytest node
// id (file.py::Class::test[params], whose [params] may hold blanks), a test file, or a
// `unittest/...` path (a file or a directory), which TensorRT-LLM's CI runs from tests/.
// Comments (`#` to the end of the line) are the caller's to strip.
#ifndef TRTLLM_RUN_SDK_COMMANDS_TEST_LIST_LINE_H_
#define TRTLLM_RUN_SDK_COMMANDS_TEST_LIST_LINE_H_

#include <optional>
#include <string>
#include <string_view>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

enum class ListMarker { kNone, kSkip, kXfail, kUnstable };

// "SKIP", "XFAIL", "UNSTABLE"; "" for kNone.
TRTLLM_RUN_API const char* ListMarkerName(ListMarker marker);

struct TestListLine {
  std::string id;          // as pytest is given it: without the full: prefix and the markers
  std::string gpu_prefix;  // "B200" of "full:B200/"; "" when none
  std::optional<std::string> k_expr;  // -k "<expr>", unquoted
  std::optional<std::string> m_expr;  // -m "<expr>", unquoted
  ListMarker marker = ListMarker::kNone;
  std::string reason;                  // of SKIP / XFAIL / UNSTABLE; "" when none was given
  std::optional<int> timeout_minutes;  // TIMEOUT (N)
  bool isolation = false;              // ISOLATION
  // Whether the id is one of TensorRT-LLM's unit tests (tests/unittest), run from tests/.
  bool IsUnittest() const { return id.rfind("unittest/", 0) == 0; }
  // Whether anything beyond a bare id was given (a prefix, a selector or a marker).
  bool HasExtras() const {
    return !gpu_prefix.empty() || k_expr || m_expr || marker != ListMarker::kNone ||
           timeout_minutes || isolation;
  }
};

// Reads `line` (trimmed, comment already removed). nullopt when it is not a test-list
// line but a command (its first word is not a test id: `pytest x.py`, `python3 y.py -v`,
// or a script path followed by words that are neither selectors nor markers).
// kInvalidInput naming the line and the grammar when it starts as a list line but breaks
// the grammar: a marker without its parentheses, TIMEOUT not a whole number of minutes, an
// unknown word after the id, a Mako template (`${...}`, which this tool does not render).
TRTLLM_RUN_API Result<std::optional<TestListLine>> ParseTestListLine(std::string_view line);

// The line again in the list's own spelling (for names and messages), e.g.
// `unittest/x.py -k "a and b" TIMEOUT (90)`.
TRTLLM_RUN_API std::string FormatTestListLine(const TestListLine& line);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_COMMANDS_TEST_LIST_LINE_H_
