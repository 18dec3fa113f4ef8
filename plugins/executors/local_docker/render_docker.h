// Category 1 (local Docker) of spec 001/002: the `docker run` command and docker_cmd.sh.
//
// The command: a container named <model>_auto_test_<unique suffix>, host network and
// IPC, SYS_PTRACE + SYS_ADMIN + DAC_READ_SEARCH, seccomp unconfined, HOME_DIR and
// LLM_MODELS_ROOT in the environment (plus custom_env), home, project and models path
// bind-mounted, the project as working directory, then `bash -c` with the install steps
// and the command. GPU flags only when the host has GPUs. Every word goes through
// ShellQuote: the command reaches the container's bash byte for byte.
#ifndef TRTLLM_RUN_LOCAL_DOCKER_RENDER_DOCKER_H_
#define TRTLLM_RUN_LOCAL_DOCKER_RENDER_DOCKER_H_

#include <string>
#include <vector>

#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct DockerRunInput {
  std::string image;
  std::string container_name;           // unique; see DockerContainerName()
  std::string repo_root;                // absolute; mounted at the same path, the working dir
  std::string home_dir;                 // absolute; mounted at the same path, $HOME_DIR
  std::string work_dir;                 // absolute; mounted too when it is outside repo_root
  std::string models_host_path;         // mounted at llm_models_root when both are set
  std::string llm_models_root;          // $LLM_MODELS_ROOT; empty: not set
  std::vector<std::string> extra_dirs;  // mounted at the same path (custom_script's dir)
  std::vector<EnvVar> env;              // custom_env, passed with -e
  int gpu_count = 0;                    // 0: no GPU flags
  bool nvidia_runtime = false;          // --runtime=nvidia, else --gpus all
  std::string pull = "missing";         // --pull never|missing|always
  std::string memory;                   // --memory and --memory-swap (e.g. "256m"); empty: none
  bool skip_install = false;            // no pip install and no `import tensorrt_llm` check
  std::string command;                  // run last in the payload, verbatim
  std::string working_dir;              // relative to repo_root: the command runs there
  // bash options the command runs under (LaunchFacts::shell_options): set just before it, after
  // the install lines; empty: none.
  std::vector<std::string> shell_options;
  // Lines run just before the command, after the options (LaunchFacts::command_prelude).
  std::string command_prelude;
};

struct DockerRun {
  // `docker run` arguments after "run", without --rm and -it (decided by the script at
  // run time) and without the image and payload.
  std::vector<std::string> options;
  std::string payload;  // the `bash -c` argument
  // docker_cmd of job_spec.json: the complete command as a person would run it:
  // "docker run --rm <options> <image> bash -c <payload>", every word shell-quoted.
  std::string command_line;
  std::string script;  // docker_cmd.sh
};

// "never", "missing", "always"; anything else is kInvalidInput naming `field`.
Status ValidateDockerPull(const std::string& value, const std::string& field);

// A docker memory size: digits with an optional b, k, m or g suffix (case-insensitive),
// at least 6m (Docker's minimum). kInvalidInput naming `field` otherwise.
Status ValidateDockerMemory(const std::string& value, const std::string& field);

// "<model>_auto_test_<work dir timestamp>_<6 random hex digits>": the timestamp (and the
// _N suffix) is taken from the work dir's name, so a container left over from another run
// cannot clash. Only [a-z0-9_] characters.
std::string DockerContainerName(const std::string& model_name, const std::string& work_dir);

// True when `name` has the form DockerContainerName(model_name, work_dir) gives (any
// random part), or that name with RenderDockerBuild's "_build".
bool IsDockerContainerNameFor(const std::string& name, const std::string& model_name,
                              const std::string& work_dir);

// The label every container of a run carries: trtllm-run.work_dir=<work dir>.
inline constexpr char kDockerWorkDirLabel[] = "trtllm-run.work_dir";

// Renders the run. Does not touch the disk or Docker.
DockerRun RenderDockerRun(const DockerRunInput& input);

// The build pre-step (build_project): the same container options under the name
// "<container_name>_build", running `python3 ./scripts/build_wheel.py --use_ccache` in
// the repo and then nothing else. `input.command` and `skip_install` are ignored.
DockerRun RenderDockerBuild(const DockerRunInput& input);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_LOCAL_DOCKER_RENDER_DOCKER_H_
