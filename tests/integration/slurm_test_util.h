// Helpers of the Slurm integration tests (local_slurm_test.cc, remote_slurm_test.cc):
// the services, job specs and batch scripts of the rendered shape, and what the real
// scheduler says about a job. Header-only: the integration binary globs *_test.cc.
// The cluster trtllm-test (tests/services/slurm.sh): nodes `localhost` and `gpunode2`
// (2 fake GPUs each) and `cpunode` (none); partition `multi` holds both GPU nodes for
// 2-node jobs (multinode_test.cc), every other partition one node.
#ifndef TRTLLM_RUN_TESTS_INTEGRATION_SLURM_TEST_UTIL_H_
#define TRTLLM_RUN_TESTS_INTEGRATION_SLURM_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run_test {

// The source tree (TRTLLM_RUN_SOURCE_DIR: an absolute path the build gives the tests, so
// that they find their files from any working directory).
inline std::string SourceDir() { return TRTLLM_RUN_SOURCE_DIR; }

// Runs a shell command; returns its stdout (stderr goes to the test's stderr).
inline std::string Shell(const std::string& command, int* exit_status = nullptr) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  std::size_t n;
  while ((n = ::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  int status = ::pclose(pipe);
  if (exit_status) *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

inline void EnsureService(const std::string& name) {
  static bool slurm_done = false, sshd_done = false;
  bool& done = name == "slurm" ? slurm_done : sshd_done;
  if (done) return;
  int status = 0;
  std::string out =
      Shell("bash " + SourceDir() + "/tests/services/" + name + ".sh ensure 2>&1", &status);
  INFO(out);
  REQUIRE(status == 0);
  done = true;
}
inline void EnsureSlurm() { EnsureService("slurm"); }
inline void EnsureSshd() {
  EnsureService("slurm");
  EnsureService("sshd");
}

// Sets an environment variable for a scope (tests run one at a time).
class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, const std::string& value) : name_(name) {
    if (const char* old = ::getenv(name.c_str())) old_ = old;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A batch script of render_slurm.cc's shape ("[trtllm-run]" step and end lines), one
// `srun -l` per step, logs in `log_dir`.
inline std::string BatchScript(const std::string& log_dir, const std::string& model,
                               const std::vector<std::string>& steps,
                               const std::string& sbatch_lines = "") {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=research." + model + "\n";
  s += "#SBATCH --output=" + log_dir + "/" + model + "_auto_test_%j.out\n";
  s += "#SBATCH --error=" + log_dir + "/" + model + "_auto_test_%j.err\n";
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --time=00:10:00\n";
  if (!sbatch_lines.empty()) s += sbatch_lines + "\n";
  s += "set -uo pipefail\n";
  s += "echo \"[trtllm-run] job ${SLURM_JOB_ID:-?} on $(hostname) started\"\n";
  s += "exit_code=0\n";
  s += "run_step() {\n  local name=$1\n  shift\n";
  s += "  if [ \"$exit_code\" -ne 0 ]; then echo \"[trtllm-run] step ${name}: skipped\"; return 0; "
       "fi\n";
  s += "  echo \"[trtllm-run] step ${name}: started\"\n  \"$@\"\n  exit_code=$?\n";
  s += "  echo \"[trtllm-run] step ${name}: exit code ${exit_code}\"\n}\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    s += "run_step step" + std::to_string(i) + " srun -l --kill-on-bad-exit=1 bash -c " +
         trtllm_run::ShellQuote(steps[i]) + "\n";
  }
  // The end marker with a token of its own, as render_slurm.cc prints it.
  s += trtllm_run::EndMarkerEcho(trtllm_run::NewEndMarkerToken()) + "\nexit \"$exit_code\"\n";
  return s;
}

// A prepared-looking job spec for the Slurm run library.
inline trtllm_run::JobSpec SlurmTestSpec(const std::string& work_dir, const std::string& model,
                                         const std::string& scenario) {
  trtllm_run::JobSpec spec;
  spec.scenario = scenario;
  spec.workflow_type = "pytest";
  spec.model_name = model;
  spec.work_dir = work_dir;
  spec.script_name = model + "_auto_test.slurm";
  spec.script_path = work_dir + "/" + spec.script_name;
  spec.log_file_pattern = model + "_auto_test_%j.out";
  spec.log_file = work_dir + "/" + spec.log_file_pattern;
  spec.success_patterns = {"passed"};
  spec.failure_patterns = {"FAILED", "ERROR"};
  spec.monitor_timeout_seconds = 600;
  spec.build_project = false;
  spec.container_runtime = "none";
  return spec;
}

// The job's state while it still holds resources (PENDING/RUNNING/COMPLETING...); "" once
// it ended or the controller forgot it.
inline std::string JobActiveStates(const std::string& job_id) {
  std::string out = Shell("squeue -h -t PD,R,CG,CF,S,SO,RS,SI -j " + job_id + " -o %T 2>/dev/null");
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

inline std::string JobState(const std::string& job_id) {
  std::string out = Shell("squeue -h -t all -j " + job_id + " -o %T 2>/dev/null");
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

inline void WaitForJobState(const std::string& job_id, const std::string& state, int seconds) {
  for (int i = 0; i < seconds * 5; ++i) {
    if (JobState(job_id) == state) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Waits for a file to hold non-empty text; returns it trimmed ("" on timeout).
inline std::string WaitForFileText(const std::string& path, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    std::string text = ReadTextFile(path);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "";
}

}  // namespace trtllm_run_test

#endif  // TRTLLM_RUN_TESTS_INTEGRATION_SLURM_TEST_UTIL_H_
