// Registry: discovers plugin .so files, checks their API version, and creates the
// workflows and executors they provide. It is an object, not a global: each Runtime (or
// test) owns one. Objects it creates keep their plugin library loaded while they live.
#ifndef TRTLLM_RUN_REGISTRY_H_
#define TRTLLM_RUN_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/workflow.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct PluginInfo {
  std::string name;
  PluginKind kind = PluginKind::kExecutor;
  std::string version;
  std::string description;
  std::string path;  // the .so file; "(built-in)" for in-process registrations
};

// "workflow" or "executor".
TRTLLM_RUN_API const char* PluginKindName(PluginKind kind);

// A plugin file that was skipped, and why. Other plugins still load.
struct PluginProblem {
  std::string path;
  Status status;
};

class TRTLLM_RUN_API Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Loads every regular file named *.so directly in `dir`, in name order. A file that
  // fails (not a shared library, no entry point, wrong API version, duplicate name,
  // dlopen error) is recorded in problems() and skipped. A missing directory is
  // recorded too unless `missing_ok`. A directory already scanned is not scanned again.
  void LoadDirectory(const std::string& dir, bool missing_ok = false);

  // Loads one plugin file. Returns the problem (also recorded in problems()).
  Status LoadPlugin(const std::string& path);

  // In-process registration for embedding tools and tests. Duplicate names are errors.
  Status AddWorkflow(PluginInfo info, std::function<std::unique_ptr<Workflow>()> factory);
  Status AddExecutor(PluginInfo info, std::function<std::unique_ptr<Executor>()> factory);

  // Loaded plugins sorted by kind, then name.
  std::vector<PluginInfo> plugins() const;
  const std::vector<PluginProblem>& problems() const;

  std::vector<std::string> WorkflowNames() const;  // sorted
  std::vector<std::string> ExecutorNames() const;  // sorted

  // One instance of every workflow, in claim order (Workflow::ClaimOrder, then name).
  std::vector<std::shared_ptr<Workflow>> CreateWorkflows() const;

  // kNotFound naming the known executors when `name` is not registered.
  Result<std::shared_ptr<Executor>> CreateExecutor(const std::string& name) const;

  // The traits executor `name` declares (Executor::Traits()); errors as CreateExecutor.
  Result<ExecutorTraits> ExecutorTraitsOf(const std::string& name) const;

 private:
  // Hidden: a nested class takes the exported class's visibility unless told otherwise.
  struct __attribute__((visibility("hidden"))) Impl;
  std::unique_ptr<Impl> impl_;
};

// The plugin directory shipped with libcore: <dir of libtrtllm_run_core.so>/trtllm-run/plugins.
// It is the build tree's plugin directory in a build and the installed one after install.
TRTLLM_RUN_API std::string BuiltinPluginDirectory();

// The directories searched, in order: the built-in one (if `include_builtin`), each
// entry of $TRTLLM_RUN_PLUGIN_PATH (colon-separated, empty entries ignored), then
// `extra_dirs` (--plugin-dir).
TRTLLM_RUN_API std::vector<std::string> PluginSearchPath(const std::vector<std::string>& extra_dirs,
                                                         bool include_builtin = true);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_REGISTRY_H_
