// Registry tests against real plugin .so files built by tests/plugins (one directory per
// case under TEST_PLUGIN_DIR; see tests/plugins/README.txt).
#include "trtllm_run/registry.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

std::string CaseDir(const std::string& name) {
  return fs::canonical(fs::path(TEST_PLUGIN_DIR) / name).string();
}

std::string PluginFile(const std::string& dir, const std::string& file) {
  return CaseDir(dir) + "/" + file;
}

std::vector<std::string> ProblemPaths(const Registry& registry) {
  std::vector<std::string> paths;
  for (const PluginProblem& problem : registry.problems()) paths.push_back(problem.path);
  return paths;
}

// True while the file is mapped into this process (RTLD_NOLOAD never loads it).
bool IsLoaded(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  ::dlclose(handle);
  return true;
}

// Sets or unsets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

class FakeWorkflow : public Workflow {
 public:
  FakeWorkflow(std::string name, int order) : name_(std::move(name)), order_(order) {}
  std::string Name() const override { return name_; }
  int ClaimOrder() const override { return order_; }
  bool Claims(const CaseRequest&) const override { return false; }
  Result<JobPlan> Plan(const CaseRequest&) const override { return JobPlan(); }

 private:
  std::string name_;
  int order_;
};

class FakeExecutor : public Executor {
 public:
  std::string Name() const override { return "in_process"; }
  Status Validate(const CaseRequest&, const JobPlan&, const Placement&) const override {
    return Status::Ok();
  }
  Status Prepare(const CaseRequest&, const JobPlan&, const Placement&, JobSpec*) override {
    return Status::Ok();
  }
  RunResult Execute(const JobSpec&, const ExecContext&) override { return RunResult(); }
};

PluginInfo Info(const std::string& name, const std::string& version = "2.0") {
  PluginInfo info;
  info.name = name;
  info.version = version;
  info.description = "registered in-process";
  return info;
}

TEST_CASE("registry lists the plugins of a directory with name, kind, version and path",
          "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("good"));

  CHECK(registry.problems().empty());
  std::vector<PluginInfo> plugins = registry.plugins();
  REQUIRE(plugins.size() == 2);
  // Sorted by kind (workflows first), then name.
  CHECK(plugins[0].name == "test_workflow");
  CHECK(plugins[0].kind == PluginKind::kWorkflow);
  CHECK(plugins[0].version == "0.1");
  CHECK(plugins[0].path == PluginFile("good", "workflow.so"));
  CHECK(plugins[0].description == "test workflow for the registry tests");
  CHECK(plugins[1].name == "test_executor");
  CHECK(plugins[1].kind == PluginKind::kExecutor);
  CHECK(plugins[1].version == "1.2.3");
  CHECK(plugins[1].path == PluginFile("good", "executor.so"));

  CHECK(registry.WorkflowNames() == std::vector<std::string>{"test_workflow"});
  CHECK(registry.ExecutorNames() == std::vector<std::string>{"test_executor"});
  CHECK(std::string(PluginKindName(PluginKind::kWorkflow)) == "workflow");
  CHECK(std::string(PluginKindName(PluginKind::kExecutor)) == "executor");
}

TEST_CASE("registry creates executors and workflows that run the plugin's code", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("good"));

  Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor("test_executor");
  REQUIRE(executor.ok());
  CHECK(executor.value()->Name() == "test_executor");
  JobSpec spec;
  spec.direct_cmd = "echo hi";
  RunResult result = executor.value()->Execute(spec, ExecContext());
  CHECK(result.status == RunStatus::kPassed);
  CHECK(result.reason == "test executor test_executor ran nothing");
  CHECK(result.command == "echo hi");

  std::vector<std::shared_ptr<Workflow>> workflows = registry.CreateWorkflows();
  REQUIRE(workflows.size() == 1);
  CaseRequest request;
  request.custom_cmd = "test_workflow:echo planned";
  REQUIRE(workflows[0]->Claims(request));
  Result<JobPlan> plan = workflows[0]->Plan(request);
  REQUIRE(plan.ok());
  CHECK(plan->command == "echo planned");
}

TEST_CASE("an unknown executor name is kNotFound naming the registered executors", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("good"));

  Result<std::shared_ptr<Executor>> missing = registry.CreateExecutor("no_such_cluster");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message() == "unknown scenario/executor 'no_such_cluster'");
  CHECK(missing.status().hint() == "registered executors: test_executor");

  // A workflow is not an executor, even though the name is registered.
  Result<std::shared_ptr<Executor>> workflow = registry.CreateExecutor("test_workflow");
  REQUIRE_FALSE(workflow.ok());
  CHECK(workflow.status().code() == StatusCode::kNotFound);
}

TEST_CASE("a plugin built for another API version is refused with both versions", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("bad_version"));

  const std::string path = PluginFile("bad_version", "bad_version.so");
  REQUIRE(registry.problems().size() == 1);
  const PluginProblem& problem = registry.problems()[0];
  CHECK(problem.path == path);
  CHECK(problem.status.code() == StatusCode::kPluginError);
  CHECK(problem.status.message() == "plugin " + path +
                                        " was built for plugin API version 999; this trtllm-run "
                                        "supports version " +
                                        std::to_string(TRTLLM_RUN_PLUGIN_API_VERSION));
  CHECK_THAT(problem.status.hint(), Catch::Contains("rebuild the plugin against trtllm-run"));
  CHECK(registry.plugins().empty());
}

TEST_CASE("a shared library without the entry point is not a plugin", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("no_entry"));

  const std::string path = PluginFile("no_entry", "no_entry.so");
  REQUIRE(registry.problems().size() == 1);
  const Status& status = registry.problems()[0].status;
  CHECK(status.code() == StatusCode::kPluginError);
  CHECK(status.message() ==
        path + " is not a trtllm-run plugin: no entry point 'trtllm_run_plugin_descriptor'");
  CHECK_THAT(status.hint(), Catch::Contains("TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN") &&
                                Catch::Contains("TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN"));
  CHECK(registry.plugins().empty());
}

TEST_CASE("a plugin with an unresolved symbol fails at load time with dlerror's text",
          "[registry]") {
  Registry registry;
  const std::string path = PluginFile("unresolved", "unresolved.so");
  Status status = registry.LoadPlugin(path);

  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kPluginError);
  CHECK_THAT(status.message(),
             Catch::StartsWith("cannot load plugin " + path + ": ") &&
                 Catch::Contains("undefined symbol: trtllm_run_test_symbol_that_does_not_exist"));
  REQUIRE(registry.problems().size() == 1);
  CHECK(registry.problems()[0].path == path);
  CHECK_FALSE(IsLoaded(path));
}

TEST_CASE("malformed descriptors are refused, each with its own message", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("bad_descriptor"));

  // Files load in name order.
  REQUIRE(registry.problems().size() == 3);
  CHECK(ProblemPaths(registry) ==
        std::vector<std::string>{PluginFile("bad_descriptor", "bad_kind.so"),
                                 PluginFile("bad_descriptor", "null_factory.so"),
                                 PluginFile("bad_descriptor", "null_name.so")});
  const std::vector<PluginProblem>& problems = registry.problems();
  CHECK(problems[0].status.message() == "plugin " + problems[0].path + " declares unknown kind 7");
  CHECK_THAT(problems[0].status.hint(), Catch::Contains("1 (workflow) or 2 (executor)"));
  CHECK(problems[1].status.message() ==
        "plugin " + problems[1].path +
            " (executor 'null_factory_executor') has no factory: create_executor is null");
  CHECK(problems[2].status.message() ==
        "plugin " + problems[2].path + " declares no name (name is null)");
  for (const PluginProblem& problem : problems) {
    CHECK(problem.status.code() == StatusCode::kPluginError);
  }
  CHECK(registry.plugins().empty());
}

TEST_CASE("of two plugins with the same name the first file wins", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("duplicate"));

  const std::string first = PluginFile("duplicate", "a_first.so");
  const std::string second = PluginFile("duplicate", "b_second.so");
  REQUIRE(registry.problems().size() == 1);
  CHECK(registry.problems()[0].path == second);
  CHECK(registry.problems()[0].status.code() == StatusCode::kPluginError);
  CHECK(registry.problems()[0].status.message() ==
        "duplicate plugin name 'dup_executor': " + second + " conflicts with " + first);

  REQUIRE(registry.plugins().size() == 1);
  CHECK(registry.plugins()[0].path == first);
  CHECK(registry.plugins()[0].version == "first");
  CHECK_FALSE(IsLoaded(second));
}

TEST_CASE("bad files in a directory are reported and the good plugins still load", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("mixed"));

  std::vector<PluginInfo> plugins = registry.plugins();
  REQUIRE(plugins.size() == 2);
  CHECK(plugins[0].name == "test_workflow");
  CHECK(plugins[0].path == PluginFile("mixed", "b_workflow.so"));
  CHECK(plugins[1].name == "test_executor");
  CHECK(plugins[1].path == PluginFile("mixed", "a_executor.so"));
  Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor("test_executor");
  REQUIRE(executor.ok());
  CHECK(executor.value()->Name() == "test_executor");

  // README.txt (not *.so) and subdir.so/ (a directory) are not plugin candidates.
  const std::vector<PluginProblem>& problems = registry.problems();
  REQUIRE(ProblemPaths(registry) == std::vector<std::string>{
                                        PluginFile("mixed", "c_bad_version.so"),
                                        PluginFile("mixed", "d_no_entry.so"),
                                        PluginFile("mixed", "e_unresolved.so"),
                                        PluginFile("mixed", "not_a_plugin.so"),
                                        PluginFile("mixed", "z_duplicate.so"),
                                    });
  CHECK_THAT(problems[0].status.message(), Catch::Contains("plugin API version 999"));
  CHECK_THAT(problems[1].status.message(), Catch::Contains("no entry point"));
  CHECK_THAT(problems[2].status.message(), Catch::StartsWith("cannot load plugin "));
  CHECK(problems[3].status.message() ==
        "not a shared library: " + problems[3].path + " (no ELF header)");
  // A workflow may not reuse an executor's name either.
  CHECK(problems[4].status.message() ==
        "duplicate plugin name 'test_executor': " + problems[4].path + " conflicts with " +
            PluginFile("mixed", "a_executor.so"));
  for (const PluginProblem& problem : problems) {
    CHECK(problem.status.code() == StatusCode::kPluginError);
  }
}

TEST_CASE("objects keep their plugin library loaded after the registry is gone", "[registry]") {
  const std::string path = PluginFile("good", "executor.so");
  REQUIRE_FALSE(IsLoaded(path));

  std::shared_ptr<Executor> executor;
  std::vector<std::shared_ptr<Workflow>> workflows;
  {
    Registry registry;
    registry.LoadDirectory(CaseDir("good"));
    Result<std::shared_ptr<Executor>> created = registry.CreateExecutor("test_executor");
    REQUIRE(created.ok());
    executor = created.value();
    workflows = registry.CreateWorkflows();
    REQUIRE(IsLoaded(path));
  }

  // The registry is destroyed; the virtual calls below run code in the plugins.
  REQUIRE(IsLoaded(path));
  CHECK(executor->Name() == "test_executor");
  CHECK(executor->Execute(JobSpec(), ExecContext()).status == RunStatus::kPassed);
  REQUIRE(workflows.size() == 1);
  CHECK(workflows[0]->Name() == "test_workflow");

  // The last object out unloads its library.
  executor.reset();
  CHECK_FALSE(IsLoaded(path));
  workflows.clear();
  CHECK_FALSE(IsLoaded(PluginFile("good", "workflow.so")));
}

TEST_CASE("a directory and a file are loaded only once", "[registry]") {
  Registry registry;
  registry.LoadDirectory(CaseDir("good"));
  registry.LoadDirectory(CaseDir("good") + "/../good/");
  CHECK(registry.LoadPlugin(CaseDir("good") + "/./executor.so").ok());
  CHECK(registry.problems().empty());
  CHECK(registry.plugins().size() == 2);

  // A failed file is not retried: the same problem is returned, not recorded again.
  registry.LoadDirectory(CaseDir("duplicate"));
  REQUIRE(registry.problems().size() == 1);
  Status again = registry.LoadPlugin(PluginFile("duplicate", "b_second.so"));
  CHECK(again.message() == registry.problems()[0].status.message());
  registry.LoadDirectory(CaseDir("duplicate"));
  CHECK(registry.problems().size() == 1);
}

TEST_CASE("missing plugin directories and files are reported by name", "[registry]") {
  const std::string missing_dir = (fs::path(TEST_PLUGIN_DIR) / "does_not_exist").string();
  Registry registry;
  registry.LoadDirectory(missing_dir, /*missing_ok=*/true);
  CHECK(registry.problems().empty());

  registry.LoadDirectory(missing_dir);
  REQUIRE(registry.problems().size() == 1);
  CHECK(registry.problems()[0].path == missing_dir);
  CHECK(registry.problems()[0].status.code() == StatusCode::kNotFound);
  CHECK(registry.problems()[0].status.message() == "plugin directory not found: " + missing_dir);

  Status file = registry.LoadPlugin(missing_dir + "/gone.so");
  CHECK(file.code() == StatusCode::kNotFound);
  CHECK_THAT(file.message(), Catch::Contains(missing_dir + "/gone.so"));
  CHECK(registry.problems().size() == 2);
}

TEST_CASE("in-process registrations sit beside loaded plugins, names stay unique", "[registry]") {
  Registry registry;
  REQUIRE(registry
              .AddExecutor(Info("in_process"),
                           [] { return std::unique_ptr<Executor>(new FakeExecutor()); })
              .ok());
  REQUIRE(registry
              .AddWorkflow(Info("late", "3.0"),
                           [] { return std::unique_ptr<Workflow>(new FakeWorkflow("late", 30)); })
              .ok());
  REQUIRE(registry
              .AddWorkflow(Info("zeta"),
                           [] { return std::unique_ptr<Workflow>(new FakeWorkflow("zeta", 10)); })
              .ok());
  REQUIRE(registry
              .AddWorkflow(Info("alpha"),
                           [] { return std::unique_ptr<Workflow>(new FakeWorkflow("alpha", 10)); })
              .ok());
  registry.LoadDirectory(CaseDir("good"));
  CHECK(registry.problems().empty());

  std::vector<PluginInfo> plugins = registry.plugins();
  REQUIRE(plugins.size() == 6);
  CHECK(plugins[4].name == "in_process");
  CHECK(plugins[4].kind == PluginKind::kExecutor);
  CHECK(plugins[4].path == "(built-in)");
  CHECK(plugins[4].version == "2.0");
  CHECK(registry.ExecutorNames() == std::vector<std::string>{"in_process", "test_executor"});

  Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor("in_process");
  REQUIRE(executor.ok());
  CHECK(executor.value()->Name() == "in_process");

  // Claim order first (test_workflow is 5), then name.
  std::vector<std::string> order;
  for (const auto& workflow : registry.CreateWorkflows()) order.push_back(workflow->Name());
  CHECK(order == std::vector<std::string>{"test_workflow", "alpha", "zeta", "late"});

  Status duplicate = registry.AddWorkflow(Info("in_process"), [] {
    return std::unique_ptr<Workflow>(new FakeWorkflow("in_process", 1));
  });
  CHECK(duplicate.code() == StatusCode::kPluginError);
  CHECK(duplicate.message() ==
        "duplicate plugin name 'in_process': (built-in) conflicts with (built-in)");

  Status clash = registry.AddExecutor(Info("test_executor"),
                                      [] { return std::unique_ptr<Executor>(new FakeExecutor()); });
  CHECK(clash.message() == "duplicate plugin name 'test_executor': (built-in) conflicts with " +
                               PluginFile("good", "executor.so"));

  Status bad_name = registry.AddExecutor(
      Info("has space"), [] { return std::unique_ptr<Executor>(new FakeExecutor()); });
  CHECK(bad_name.code() == StatusCode::kPluginError);
  CHECK_THAT(bad_name.message(), Catch::Contains("'has space'"));
  CHECK(registry.plugins().size() == 6);
}

TEST_CASE("a file loaded after an in-process registration of its name is skipped", "[registry]") {
  Registry registry;
  REQUIRE(registry
              .AddExecutor(Info("test_executor"),
                           [] { return std::unique_ptr<Executor>(new FakeExecutor()); })
              .ok());
  registry.LoadDirectory(CaseDir("good"));
  REQUIRE(registry.problems().size() == 1);
  CHECK(registry.problems()[0].status.message() ==
        "duplicate plugin name 'test_executor': " + PluginFile("good", "executor.so") +
            " conflicts with (built-in)");
  CHECK(registry.CreateExecutor("test_executor").value()->Name() == "in_process");
}

TEST_CASE("the plugin search path is built-in, then TRTLLM_RUN_PLUGIN_PATH, then extras",
          "[registry]") {
  const std::string builtin = BuiltinPluginDirectory();
  {
    ScopedEnv env("TRTLLM_RUN_PLUGIN_PATH", "/p/one::/p/two:");
    CHECK(PluginSearchPath({"/extra"}) ==
          std::vector<std::string>{builtin, "/p/one", "/p/two", "/extra"});
    CHECK(PluginSearchPath({}, /*include_builtin=*/false) ==
          std::vector<std::string>{"/p/one", "/p/two"});
  }
  {
    ScopedEnv env("TRTLLM_RUN_PLUGIN_PATH", nullptr);
    CHECK(PluginSearchPath({"/a", "/b"}) == std::vector<std::string>{builtin, "/a", "/b"});
    CHECK(PluginSearchPath({}, false).empty());
  }
}

TEST_CASE(
    "the built-in plugin directory is next to libtrtllm_run_core and holds the "
    "shipped plugins",
    "[registry]") {
  const std::string builtin = BuiltinPluginDirectory();
  REQUIRE_FALSE(builtin.empty());
  CHECK(fs::weakly_canonical(builtin) == fs::weakly_canonical(BUILTIN_PLUGIN_DIR));

  Registry registry;
  registry.LoadDirectory(builtin);
  CHECK(registry.problems().empty());
  std::vector<std::string> workflows = registry.WorkflowNames();
  std::vector<std::string> executors = registry.ExecutorNames();
  CHECK(std::find(workflows.begin(), workflows.end(), "custom") != workflows.end());
  CHECK(std::find(executors.begin(), executors.end(), "local_direct") != executors.end());
}

}  // namespace
}  // namespace trtllm_run
