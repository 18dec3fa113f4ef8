// Rendering a TensorRT-LLM test-db YAML (tests/integration/test_lists/test-db/<ctx>.yml)
// for a set of match keys, with the condition semantics of CI's trt-test-db (mirrored in
// the repo by jenkins/scripts/cbts/blocks.py):
//   terms:     {key: value}            the key's value equals value
//   ranges:    {key: {gte: a, lte: b}} the key's value is an integer within [a, b]
//                                      (either bound may be absent)
//   wildcards: {key: pattern | [patterns]}  the key's value fnmatches one pattern,
//                                      case-insensitively
// A block matches when every check holds; a block without `condition:` matches. A key the
// caller does not know (linux_distribution_name, cpu: facts of the machine CI probes) is
// assumed to match, and the explanation says so.
#ifndef TRTLLM_RUN_STAGE_TEST_DB_RENDER_H_
#define TRTLLM_RUN_STAGE_TEST_DB_RENDER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/sdk/commands/test_list_line.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct RenderedTest {
  TestListLine line;
  std::string origin;  // "<file>:<line>"
  // The pytest node id CI collects for the line, as test_list_parser.py makes it: the text
  // before the first marker, `unittest/...` wrapped in test_unittests.py::test_unittests_v2[].
  // The key of .test_durations.
  std::string node_id;
};

struct RenderedTestDb {
  std::vector<RenderedTest> tests;     // the matched blocks' lines in file order, once each
  std::vector<std::string> explained;  // one line per block: matched or not, and why
  std::vector<std::string> warnings;   // lines listed twice, ...
};

// Renders `yaml_text` (read from `origin`) whose list of blocks is under `context`.
// kInvalidInput naming origin and line: not YAML, no `<context>:` list, a condition of
// an unknown kind (valid: terms, ranges, wildcards) or shape, a test line that breaks the
// list grammar. An empty render is not an error here (PlanStage reports it).
Result<RenderedTestDb> RenderTestDb(const std::string& yaml_text, const std::string& origin,
                                    const std::string& context,
                                    const std::map<std::string, std::string>& keys);

// A list line without its full: prefix and markers, selectors kept, in the list's
// spelling: `unittest/x.py -k "a"`. Two lines name the same test when their keys are equal.
std::string TestListKey(const TestListLine& line);

// The node id of a list line as written (see RenderedTest::node_id).
std::string CiNodeId(std::string_view line_text);

// "a=1, b=x": the keys in one line, for messages.
std::string KeysText(const std::map<std::string, std::string>& keys);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_TEST_DB_RENDER_H_
