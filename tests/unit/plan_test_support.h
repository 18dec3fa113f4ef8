// Helpers for the planning and rendering tests: the fake TensorRT-LLM tree, the built-in
// workflow plugins, temporary directories, reading rendered Slurm scripts back, and
// running them with bash and a stand-in `srun` that runs its command.
#ifndef TRTLLM_RUN_TESTS_UNIT_PLAN_TEST_SUPPORT_H_
#define TRTLLM_RUN_TESTS_UNIT_PLAN_TEST_SUPPORT_H_

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/registry.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/render.h"
#include "trtllm_run/sdk/text.h"

namespace plan_test {

namespace fs = std::filesystem;
using namespace trtllm_run;

// tests/fixtures/<name> of the source tree (TRTLLM_RUN_SOURCE_DIR, absolute).
inline std::string FixturePath(const std::string& name) {
  return fs::absolute(fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / name)
      .lexically_normal()
      .string();
}
inline std::string FakeRepo() { return FixturePath("trtllm"); }

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "trtllm_run_plan") {
    std::string pattern = (fs::temp_directory_path() / (prefix + "_XXXXXX")).string();
    char* made = ::mkdtemp(pattern.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteText(const std::string& path, const std::string& text, bool executable = false) {
  fs::create_directories(fs::path(path).parent_path());
  REQUIRE(WriteFileAtomic(path, text).ok());
  if (executable) ::chmod(path.c_str(), 0755);
}

inline std::string ReadText(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? text.value() : std::string();
}

// A copy of the fake repo that tests may write into (work_dirs/).
inline void CopyFakeRepo(const std::string& to) {
  fs::copy(FakeRepo(), to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// The built-in plugins of this build, loaded once.
inline Registry& Builtins() {
  static Registry* registry = [] {
    auto* r = new Registry();
    r->LoadDirectory(BUILTIN_PLUGIN_DIR);
    return r;
  }();
  return *registry;
}

// Classifies like the runtime and lets the first workflow (claim order) that claims the
// request plan it. repo_root defaults to the fake repo.
inline Result<JobPlan> PlanCase(CaseRequest request) {
  if (!request.repo_root) request.repo_root = FakeRepo();
  Result<CommandKind> kind = ClassifyCommand(request);
  if (!kind.ok()) return kind.status();
  for (const std::shared_ptr<Workflow>& workflow : Builtins().CreateWorkflows()) {
    if (!workflow->Claims(request)) continue;
    Result<JobPlan> plan = workflow->Plan(request);
    if (plan.ok()) plan->repo_root = *request.repo_root;
    return plan;
  }
  return Status::NotFound("no workflow claims the request");
}

inline bool HasNote(const JobPlan& plan, const std::string& text) {
  for (const std::string& note : plan.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

inline std::string Notes(const JobPlan& plan) {
  std::string all;
  for (const std::string& note : plan.notes) all += "  " + note + "\n";
  return all;
}

// The slurm_env of tests/fixtures/slurm_env/<name>.json.
inline SlurmEnv LoadEnv(const std::string& name) {
  std::string path = FixturePath("slurm_env/" + name + ".json");
  Result<SlurmEnv> env = SlurmEnvFromJson(ReadText(path), path);
  REQUIRE(env.ok());
  return env.value();
}

// ---- Reading rendered scripts back ----

// #SBATCH --key=value (or "-o value") lines, in order.
inline std::multimap<std::string, std::string> Sbatch(const std::string& script) {
  std::multimap<std::string, std::string> directives;
  size_t start = 0;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string::npos) end = script.size();
    std::string line = script.substr(start, end - start);
    start = end + 1;
    if (line.rfind("#SBATCH ", 0) != 0) continue;
    std::string rest = line.substr(8);
    size_t eq = rest.find('=');
    size_t space = rest.find(' ');
    size_t cut = std::min(eq, space);
    if (cut == std::string::npos) {
      directives.emplace(rest, "");
    } else {
      directives.emplace(rest.substr(0, cut), rest.substr(cut + 1));
    }
  }
  return directives;
}

inline std::string One(const std::multimap<std::string, std::string>& directives,
                       const std::string& key) {
  auto range = directives.equal_range(key);
  if (range.first == range.second) return "<absent>";
  if (std::next(range.first) != range.second) return "<repeated>";
  return range.first->second;
}

// One `run_step NAME srun ...` line of a batch script: its srun options and the command
// srun runs (the payload words), as the shell would see them.
struct StepCall {
  std::string name;
  std::map<std::string, std::string> options;  // "--ntasks" -> "4"; "-l" -> ""
  std::vector<std::string> command;            // e.g. {"bash", "-c", "<payload>"}
  bool Has(const std::string& option) const { return options.count(option) != 0; }
  std::string Get(const std::string& option) const {
    auto it = options.find(option);
    return it == options.end() ? "<absent>" : it->second;
  }
};

inline std::vector<StepCall> Steps(const std::string& script) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(script);
  REQUIRE(tokens.ok());
  std::vector<StepCall> steps;
  const std::vector<ShellToken>& t = tokens.value();
  for (size_t i = 0; i < t.size(); ++i) {
    bool starts = t[i].kind == ShellToken::kWord && t[i].text == "run_step" &&
                  (i == 0 || t[i - 1].kind == ShellToken::kOperator) && i + 2 < t.size() &&
                  t[i + 2].text == "srun";
    if (!starts) continue;
    StepCall step;
    step.name = t[i + 1].text;
    size_t j = i + 3;
    for (; j < t.size() && t[j].kind == ShellToken::kWord && t[j].text.rfind("-", 0) == 0; ++j) {
      const std::string& word = t[j].text;
      size_t eq = word.find('=');
      step.options[word.substr(0, eq)] = eq == std::string::npos ? "" : word.substr(eq + 1);
    }
    for (; j < t.size() && t[j].kind == ShellToken::kWord; ++j) step.command.push_back(t[j].text);
    steps.push_back(std::move(step));
  }
  return steps;
}

inline const StepCall* FindStep(const std::vector<StepCall>& steps, const std::string& name) {
  for (const StepCall& step : steps) {
    if (step.name == name) return &step;
  }
  return nullptr;
}

// `bash -n` on a script file: "" when it parses, else bash's complaint.
inline std::string BashSyntaxError(const std::string& path) {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<CommandOutput> out = local->Run({"bash", "-n", path}, "");
  REQUIRE(out.ok());
  return out->exit_code == 0 ? "" : "bash -n " + path + ": " + out->stderr_text;
}

// A directory with stand-ins for `srun` (drops its options, runs the command) and
// `nvidia-smi` (prints nothing), put first on PATH by RunScript.
inline void WriteShims(const std::string& dir) {
  WriteText(dir + "/srun",
            "#!/bin/bash\n"
            "# Test stand-in for srun: drops the options and runs the command.\n"
            "while [ $# -gt 0 ]; do case \"$1\" in -*) shift ;; *) break ;; esac; done\n"
            "exec \"$@\"\n",
            true);
  WriteText(dir + "/nvidia-smi", "#!/bin/sh\nexit 0\n", true);
}

inline CommandOutput RunScript(const std::string& shim_dir, const std::vector<std::string>& argv,
                               const std::string& cwd = "") {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  const char* path = std::getenv("PATH");
  std::vector<std::string> full = {"env",
                                   "PATH=" + shim_dir + ":" + (path ? path : "/usr/bin:/bin")};
  std::string command;
  if (!cwd.empty()) {
    full.insert(full.end(), {"bash", "-c", "cd \"$0\" && exec \"$@\"", cwd});
  }
  full.insert(full.end(), argv.begin(), argv.end());
  Result<CommandOutput> out = local->Run(full, "");
  REQUIRE(out.ok());
  return out.value();
}

// The stdout a step printed between the script's "started" and "exit code" lines.
inline std::string StepOutput(const std::string& stdout_text, const std::string& step) {
  const std::string begin = "[trtllm-run] step " + step + ": started\n";
  const std::string end = "[trtllm-run] step " + step + ": exit code ";
  size_t from = stdout_text.find(begin);
  if (from == std::string::npos) return "<step " + step + " did not start>";
  from += begin.size();
  size_t to = stdout_text.find(end, from);
  if (to == std::string::npos) return "<step " + step + " did not end>";
  return stdout_text.substr(from, to - from);
}

}  // namespace plan_test

#endif  // TRTLLM_RUN_TESTS_UNIT_PLAN_TEST_SUPPORT_H_
