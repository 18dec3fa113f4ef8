// GPU-count markers of a pytest test, read from its Python source without running it
// (spec-notes "GPU-count markers in real tests"). Private to the pytest workflow.
#ifndef TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTHON_MARKERS_H_
#define TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTHON_MARKERS_H_

#include <optional>
#include <string>
#include <vector>

namespace trtllm_run {
namespace pytest_markers {

// A pytest node id split into its parts: "a/test_x.py::TestC::test_f[p1-p2]".
struct NodeId {
  std::string file;                  // "a/test_x.py"
  std::vector<std::string> classes;  // {"TestC"}
  std::string function;              // "test_f" (params stripped); "" for a whole file
  std::string params;                // "p1-p2"; "" when none
};
NodeId ParseNodeId(const std::string& word);

// The device count the markers of the test ask for, and where it came from.
struct DeviceMarker {
  int devices = 0;
  std::string source;  // e.g. "skip_less_device(4) on TestC", "pytest.param id 'tp4' marks"
};

// Result of looking the node id up in `source` (the file's text).
struct Lookup {
  bool function_found = false;
  std::optional<DeviceMarker> marker;  // the GPU count, as below
  // skip_less_device_memory(MiB): the largest at any level (the repo's fixture reads every
  // level's); `devices` holds the MiB.
  std::optional<DeviceMarker> memory_mib;
};

// The GPU count of the node. Levels, closest first: the function's own decorators with
// the marks of the pytest.param its [params] select (by the param's id=, by the position
// the parametrize's ids=[...] list names, or by the id pytest makes from its values), the
// enclosing classes' decorators and pytestmark (innermost first), the module's pytestmark.
// Each marker kind is taken from the closest level that has it, as the repo's conftest
// reads each with get_closest_marker: skip_less_device(N), skip_less_mpi_world_size(N)
// (N ranks, one GPU each), pytest.mark.gpuN / skip_single_gpu (2); the count is the
// largest of the three.
Lookup FindDeviceMarker(const std::string& source, const NodeId& node);

}  // namespace pytest_markers
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTHON_MARKERS_H_
