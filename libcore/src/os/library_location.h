// Where libtrtllm_run_core lies: the directory the built-in plugins and the shipped data
// files are found from (BuiltinPluginDirectory, DataDirectory).
#ifndef TRTLLM_RUN_OS_LIBRARY_LOCATION_H_
#define TRTLLM_RUN_OS_LIBRARY_LOCATION_H_

#include <string>

namespace trtllm_run {

// The directory holding libtrtllm_run_core.so: where the loaded library was read from
// (the build tree's or the installation's lib/). In the static copy of core that tests,
// benchmarks and fuzz targets link (trtllm_run_internal), the build tree's lib/, fixed at
// compile time: the copy itself lies in the program, beside no plugin. Empty when the
// location cannot be found.
std::string CoreLibraryDirectory();

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_OS_LIBRARY_LOCATION_H_
