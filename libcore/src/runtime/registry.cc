// Registry: loads plugin .so files with Boost.DLL and hands out the objects they create.
//
// Every check a plugin file goes through has its own message naming the file: not an ELF
// file, dlopen failure (with dlerror), no entry point, wrong API version, a malformed
// descriptor, a duplicate name. Objects created by a plugin are returned in shared_ptrs
// whose deleter holds the plugin's library, so the code of an object's virtual methods
// stays mapped while the object lives, even after the Registry is gone.
#include "trtllm_run/registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <boost/dll/shared_library.hpp>
#include <boost/filesystem.hpp>

#include "model/plugin_call.h"
#include "os/library_location.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace bfs = boost::filesystem;
using Library = boost::dll::shared_library;

constexpr char kBuiltinPath[] = "(built-in)";
constexpr char kNoVersion[] = "unknown";

struct Entry {
  PluginInfo info;
  std::shared_ptr<Library> library;  // null for in-process registrations
  std::function<std::unique_ptr<Workflow>()> make_workflow;
  std::function<std::unique_ptr<Executor>()> make_executor;
};

// Names appear in listings, on the command line (--scenario) and in work dirs.
bool IsValidName(const std::string& name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

Status InvalidName(const std::string& where, const std::string& name) {
  return Status::PluginError(where + " has an invalid plugin name '" + name + "'",
                             "a plugin name is non-empty and uses only letters, digits, '_', "
                             "'-' and '.'");
}

// Wraps `object` so that deleting it also drops this reference to its library: the
// object is deleted first, while its destructor's code is still mapped.
template <typename T>
std::shared_ptr<T> Adopt(std::unique_ptr<T> object, std::shared_ptr<Library> library) {
  if (!object) return nullptr;
  if (!library) return std::shared_ptr<T>(std::move(object));
  return std::shared_ptr<T>(object.release(), [library](T* raw) mutable {
    delete raw;
    library.reset();
  });
}

// Calls a plugin factory; a factory that throws or returns null is a plugin error.
template <typename T>
Result<std::shared_ptr<T>> Instantiate(const Entry& entry,
                                       const std::function<std::unique_ptr<T>()>& factory) {
  std::string failure;
  try {
    std::shared_ptr<T> object = Adopt(factory(), entry.library);
    if (object) return object;
    failure = "its factory returned null";
  } catch (const std::exception& e) {
    failure = std::string("its factory threw: ") + e.what();
  } catch (...) {
    failure = "its factory threw an unknown exception";
  }
  return Status::PluginError(std::string("plugin '") + entry.info.name + "' (" + entry.info.path +
                             ") could not create its " + PluginKindName(entry.info.kind) + ": " +
                             failure);
}

// True when the file starts with the ELF magic bytes 0x7f 'E' 'L' 'F'.
bool HasElfHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  if (!in.read(magic, sizeof(magic))) return false;
  return magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

// The absolute, symlink-free form of `path` when it exists, else its absolute form.
std::string CanonicalPath(const std::string& path) {
  boost::system::error_code error;
  bfs::path canonical = bfs::canonical(path, error);
  if (error) return bfs::absolute(path).lexically_normal().string();
  return canonical.string();
}

}  // namespace

const char* PluginKindName(PluginKind kind) {
  switch (kind) {
    case PluginKind::kWorkflow:
      return "workflow";
    case PluginKind::kExecutor:
      return "executor";
  }
  return "unknown";
}

struct Registry::Impl {
  std::map<std::string, Entry> entries;  // by name; names are unique across kinds
  std::vector<PluginProblem> problems;
  std::set<std::string> scanned_dirs;             // canonical
  std::map<std::string, Status> attempted_files;  // canonical path -> outcome

  void Record(const std::string& path, Status status) {
    problems.push_back(PluginProblem{path, std::move(status)});
  }

  // The duplicate-name error for `name` registered again from `path`, or OK.
  Status CheckUnique(const std::string& name, const std::string& path) const {
    auto it = entries.find(name);
    if (it == entries.end()) return Status::Ok();
    return Status::PluginError(
        "duplicate plugin name '" + name + "': " + path + " conflicts with " + it->second.info.path,
        "the first one loaded (" + it->second.info.path +
            ") is used; remove or rename the other plugin");
  }

  Status Load(const std::string& path);

  // Registers `entry` (its factory set, `has_factory` saying so) under info.name as a
  // plugin of `kind` added in code: no file, so path and version get placeholders.
  Status Add(PluginInfo info, PluginKind kind, bool has_factory, Entry entry) {
    const std::string where = std::string(PluginKindName(kind)) + " registration";
    if (!IsValidName(info.name)) return InvalidName(where, info.name);
    if (!has_factory) return Status::InvalidInput(where + " '" + info.name + "' has no factory");
    info.kind = kind;
    if (info.path.empty()) info.path = kBuiltinPath;
    if (info.version.empty()) info.version = kNoVersion;
    TRTLLM_RUN_RETURN_IF_ERROR(CheckUnique(info.name, info.path));
    const std::string name = info.name;
    entry.info = std::move(info);
    entries.emplace(name, std::move(entry));
    return Status::Ok();
  }
};

Status Registry::Impl::Load(const std::string& path) {
  boost::system::error_code error;
  if (!bfs::is_regular_file(path, error)) {
    if (!bfs::exists(path, error)) {
      return Status::NotFound("plugin file not found: " + path);
    }
    return Status::PluginError("not a shared library: " + path + " (not a regular file)");
  }
  if (!HasElfHeader(path)) {
    return Status::PluginError("not a shared library: " + path + " (no ELF header)",
                               "plugin directories may hold only trtllm-run plugin .so files");
  }

  PrepareCoreForPlugins();
  auto library = std::make_shared<Library>();
  ::dlerror();  // clear any stale error so the message below is this load's
  library->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, error);
  if (error || !library->is_loaded()) {
    const char* reason = ::dlerror();
    return Status::PluginError("cannot load plugin " + path + ": " +
                               (reason != nullptr ? std::string(reason) : error.message()));
  }

  if (!library->has(TRTLLM_RUN_PLUGIN_ENTRY_POINT)) {
    return Status::PluginError(
        path + " is not a trtllm-run plugin: no entry point '" TRTLLM_RUN_PLUGIN_ENTRY_POINT "'",
        "define the entry point with TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN or "
        "TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN from <trtllm_run/plugin_api.h>");
  }
  using EntryPoint = const TrtllmRunPluginDescriptor*();
  const TrtllmRunPluginDescriptor* descriptor =
      library->get<EntryPoint>(TRTLLM_RUN_PLUGIN_ENTRY_POINT)();
  if (descriptor == nullptr) {
    return Status::PluginError("plugin " + path +
                               ": '" TRTLLM_RUN_PLUGIN_ENTRY_POINT "' returned no descriptor");
  }

  // Only api_version may be read before it is known to match: the rest of the
  // descriptor's layout belongs to that version.
  if (descriptor->api_version != TRTLLM_RUN_PLUGIN_API_VERSION) {
    return Status::PluginError(
        "plugin " + path + " was built for plugin API version " +
            std::to_string(descriptor->api_version) + "; this trtllm-run supports version " +
            std::to_string(TRTLLM_RUN_PLUGIN_API_VERSION),
        "rebuild the plugin against trtllm-run " TRTLLM_RUN_VERSION_STRING " (plugin API version " +
            std::to_string(TRTLLM_RUN_PLUGIN_API_VERSION) + ")");
  }

  const int kind = descriptor->kind;
  if (kind != static_cast<int>(PluginKind::kWorkflow) &&
      kind != static_cast<int>(PluginKind::kExecutor)) {
    return Status::PluginError("plugin " + path + " declares unknown kind " + std::to_string(kind),
                               "kind must be 1 (workflow) or 2 (executor); use the "
                               "TRTLLM_RUN_DECLARE_*_PLUGIN macros");
  }
  if (descriptor->name == nullptr) {
    return Status::PluginError("plugin " + path + " declares no name (name is null)");
  }
  std::string name = descriptor->name;
  if (!IsValidName(name)) return InvalidName("plugin " + path, name);

  const bool is_workflow = kind == static_cast<int>(PluginKind::kWorkflow);
  const char* kind_name = is_workflow ? "workflow" : "executor";
  const bool has_own_factory =
      is_workflow ? descriptor->create_workflow != nullptr : descriptor->create_executor != nullptr;
  const bool has_other_factory =
      is_workflow ? descriptor->create_executor != nullptr : descriptor->create_workflow != nullptr;
  if (!has_own_factory) {
    return Status::PluginError("plugin " + path + " (" + kind_name + " '" + name +
                               "') has no factory: create_" + kind_name + " is null");
  }
  if (has_other_factory) {
    return Status::PluginError("plugin " + path + " (" + kind_name + " '" + name +
                               "') also sets create_" + (is_workflow ? "executor" : "workflow") +
                               "; a plugin provides exactly one workflow or executor");
  }

  TRTLLM_RUN_RETURN_IF_ERROR(CheckUnique(name, path));

  Entry entry;
  entry.info.name = name;
  entry.info.kind = static_cast<PluginKind>(kind);
  entry.info.version = descriptor->version != nullptr && descriptor->version[0] != '\0'
                           ? descriptor->version
                           : kNoVersion;
  entry.info.description = descriptor->description != nullptr ? descriptor->description : "";
  entry.info.path = path;
  if (is_workflow) {
    Workflow* (*create)() = descriptor->create_workflow;
    entry.make_workflow = [create] { return std::unique_ptr<Workflow>(create()); };
  } else {
    Executor* (*create)() = descriptor->create_executor;
    entry.make_executor = [create] { return std::unique_ptr<Executor>(create()); };
  }
  entry.library = std::move(library);
  entries.emplace(name, std::move(entry));
  return Status::Ok();
}

Registry::Registry() : impl_(std::make_unique<Impl>()) {}
Registry::~Registry() = default;

void Registry::LoadDirectory(const std::string& dir, bool missing_ok) {
  boost::system::error_code error;
  if (!bfs::exists(dir, error)) {
    if (!missing_ok) {
      impl_->Record(dir, Status::NotFound("plugin directory not found: " + dir,
                                          "check --plugin-dir and TRTLLM_RUN_PLUGIN_PATH"));
    }
    return;
  }
  if (!bfs::is_directory(dir, error)) {
    impl_->Record(dir, Status::PluginError("plugin directory is not a directory: " + dir));
    return;
  }
  const std::string canonical = CanonicalPath(dir);
  if (!impl_->scanned_dirs.insert(canonical).second) return;

  std::vector<std::string> files;
  bfs::directory_iterator it(canonical, error);
  for (; !error && it != bfs::directory_iterator(); it.increment(error)) {
    const bfs::path& file = it->path();
    const std::string name = file.filename().string();
    if (name.size() <= 3 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
    boost::system::error_code status_error;
    if (!bfs::is_regular_file(file, status_error)) continue;  // follows symlinks
    files.push_back(file.string());
  }
  if (error) {
    impl_->Record(dir,
                  Status::IoError("cannot list plugin directory " + dir + ": " + error.message()));
    return;
  }
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) LoadPlugin(file).IgnoreError();  // recorded in problems()
}

Status Registry::LoadPlugin(const std::string& path) {
  const std::string canonical = CanonicalPath(path);
  auto attempted = impl_->attempted_files.find(canonical);
  if (attempted != impl_->attempted_files.end()) return attempted->second;
  Status status;
  try {
    status = impl_->Load(canonical);
  } catch (const std::exception& e) {  // Boost.DLL and Boost.Filesystem report by throwing
    status = Status::PluginError("cannot load plugin " + canonical + ": " + e.what());
  }
  impl_->attempted_files.emplace(canonical, status);
  if (!status.ok()) impl_->Record(canonical, status);
  return status;
}

Status Registry::AddWorkflow(PluginInfo info, std::function<std::unique_ptr<Workflow>()> factory) {
  Entry entry;
  entry.make_workflow = std::move(factory);
  const bool has_factory = static_cast<bool>(entry.make_workflow);
  return impl_->Add(std::move(info), PluginKind::kWorkflow, has_factory, std::move(entry));
}

Status Registry::AddExecutor(PluginInfo info, std::function<std::unique_ptr<Executor>()> factory) {
  Entry entry;
  entry.make_executor = std::move(factory);
  const bool has_factory = static_cast<bool>(entry.make_executor);
  return impl_->Add(std::move(info), PluginKind::kExecutor, has_factory, std::move(entry));
}

std::vector<PluginInfo> Registry::plugins() const {
  std::vector<PluginInfo> infos;
  for (const auto& [name, entry] : impl_->entries) infos.push_back(entry.info);
  std::stable_sort(infos.begin(), infos.end(), [](const PluginInfo& a, const PluginInfo& b) {
    return static_cast<int>(a.kind) < static_cast<int>(b.kind);
  });
  return infos;
}

const std::vector<PluginProblem>& Registry::problems() const { return impl_->problems; }

std::vector<std::string> Registry::WorkflowNames() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : impl_->entries) {
    if (entry.info.kind == PluginKind::kWorkflow) names.push_back(name);
  }
  return names;
}

std::vector<std::string> Registry::ExecutorNames() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : impl_->entries) {
    if (entry.info.kind == PluginKind::kExecutor) names.push_back(name);
  }
  return names;
}

std::vector<std::shared_ptr<Workflow>> Registry::CreateWorkflows() const {
  // A workflow whose factory or ClaimOrder() fails is left out; it cannot claim anything.
  std::vector<std::pair<std::tuple<int, std::string>, std::shared_ptr<Workflow>>> created;
  for (const auto& [name, entry] : impl_->entries) {
    if (entry.info.kind != PluginKind::kWorkflow) continue;
    Result<std::shared_ptr<Workflow>> workflow = Instantiate(entry, entry.make_workflow);
    if (!workflow.ok()) continue;
    Result<int> order = GuardPluginCall(WorkflowLabel(name), "ClaimOrder()",
                                        [&] { return workflow.value()->ClaimOrder(); });
    if (!order.ok()) continue;
    created.emplace_back(std::make_tuple(order.value(), name), std::move(workflow.value()));
  }
  std::sort(created.begin(), created.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::shared_ptr<Workflow>> workflows;
  for (auto& item : created) workflows.push_back(std::move(item.second));
  return workflows;
}

Result<std::shared_ptr<Executor>> Registry::CreateExecutor(const std::string& name) const {
  auto it = impl_->entries.find(name);
  if (it == impl_->entries.end() || it->second.info.kind != PluginKind::kExecutor) {
    std::vector<std::string> names = ExecutorNames();
    return Status::NotFound("unknown scenario/executor '" + name + "'",
                            "registered executors: " +
                                (names.empty() ? std::string("(none; run 'trtllm-run plugins' to "
                                                             "see which plugins failed to load)")
                                               : Join(names, ", ")));
  }
  return Instantiate(it->second, it->second.make_executor);
}

Result<ExecutorTraits> Registry::ExecutorTraitsOf(const std::string& name) const {
  Result<std::shared_ptr<Executor>> executor = CreateExecutor(name);
  if (!executor.ok()) return executor.status();
  return executor.value()->Traits();
}

std::string BuiltinPluginDirectory() {
  const std::string library_dir = CoreLibraryDirectory();
  if (library_dir.empty()) return std::string();
  return (bfs::path(library_dir) / TRTLLM_RUN_PLUGIN_SUBDIR).lexically_normal().string();
}

std::vector<std::string> PluginSearchPath(const std::vector<std::string>& extra_dirs,
                                          bool include_builtin) {
  std::vector<std::string> dirs;
  if (include_builtin) dirs.push_back(BuiltinPluginDirectory());
  if (const char* env = std::getenv("TRTLLM_RUN_PLUGIN_PATH")) {
    std::string value = env;
    size_t start = 0;
    while (start <= value.size()) {
      size_t end = value.find(':', start);
      if (end == std::string::npos) end = value.size();
      if (end > start) dirs.push_back(value.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  return dirs;
}

}  // namespace trtllm_run
