// Compiled into each library on its own (libcore/CMakeLists.txt): libtrtllm_run_core.so
// asks where it was loaded from, trtllm_run_internal is given the build tree's lib/ as
// TRTLLM_RUN_CORE_LIBRARY_DIR.
#include "os/library_location.h"

#ifdef TRTLLM_RUN_CORE_LIBRARY_DIR
#include <dlfcn.h>

#include <mutex>
#else
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/filesystem/path.hpp>
#endif

namespace trtllm_run {

std::string CoreLibraryDirectory() {
#ifdef TRTLLM_RUN_CORE_LIBRARY_DIR
  return TRTLLM_RUN_CORE_LIBRARY_DIR;
#else
  // this_line_location() is the file this function was compiled into: libtrtllm_run_core.
  boost::system::error_code error;
  boost::filesystem::path library = boost::dll::this_line_location(error);
  if (error) return std::string();
  return library.parent_path().string();
#endif
}

void PrepareCoreForPlugins() {
#ifdef TRTLLM_RUN_CORE_LIBRARY_DIR
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string library = std::string(TRTLLM_RUN_CORE_LIBRARY_DIR) + "/libtrtllm_run_core.so";
    ::dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  });
#endif
}

}  // namespace trtllm_run
