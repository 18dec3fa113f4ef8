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

// Called before a plugin is loaded. In libtrtllm_run_core.so: nothing (a program that links
// it has it in the global symbol scope from its start). In the static copy: loads the build
// tree's libtrtllm_run_core.so once into the global scope (RTLD_GLOBAL, never unloaded), as
// the CLI has it, before the first plugin pulls it in as a dependency. Pulled in by a plugin,
// the library would resolve its own default-visibility symbols (std:: template instances,
// typeinfo) in that plugin's scope first, bind to the plugin, and keep it loaded after its
// last object is gone. Best effort: on failure plugins load as before.
void PrepareCoreForPlugins();

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_OS_LIBRARY_LOCATION_H_
