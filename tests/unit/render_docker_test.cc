// Category 1 rendering: the docker run options, the payload, docker_cmd as a person would
// paste it, docker_cmd.sh, and the inputs it validates. The commands are read back with a
// real shell (bash) where byte-for-byte quoting matters.
#include "render_docker.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

DockerRunInput SampleInput() {
  DockerRunInput in;
  in.image = "nvcr.io/nvidia/tensorrt-llm/release:1.0";
  in.container_name = "llama_auto_test_20260101_120000_abcdef";
  in.repo_root = "/home/u/TensorRT-LLM";
  in.home_dir = "/home/u";
  in.work_dir = "/home/u/TensorRT-LLM/work_dirs/llama_20260101_120000";
  in.command = "pytest tests/unittest -k 'a and b'";
  return in;
}

bool Has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// The value after `flag` each time it appears.
std::vector<std::string> Values(const std::vector<std::string>& words, const std::string& flag) {
  std::vector<std::string> values;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == flag) values.push_back(words[i + 1]);
  }
  return values;
}

// Runs `script` with bash, stdin /dev/null, and returns its stdout. Killed after 60 s:
// a script that waits (on a terminal, on a real docker) fails the test instead of
// hanging it.
std::string BashOutput(const std::string& script) {
  std::string command = "timeout -k 5 60 bash -c " + ShellQuote(script) + " </dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

std::vector<std::string> SplitNul(const std::string& text) {
  std::vector<std::string> words;
  std::string::size_type start = 0;
  while (start < text.size()) {
    std::string::size_type nul = text.find('\0', start);
    if (nul == std::string::npos) nul = text.size();
    words.push_back(text.substr(start, nul - start));
    start = nul + 1;
  }
  return words;
}

TEST_CASE("RenderDockerRun: the Category 1 flags", "[render_docker]") {
  DockerRun run = RenderDockerRun(SampleInput());
  const std::vector<std::string>& o = run.options;
  CHECK(Values(o, "--name") == std::vector<std::string>{"llama_auto_test_20260101_120000_abcdef"});
  CHECK(Has(o, "--network=host"));
  CHECK(Has(o, "--ipc=host"));
  // Docker's init is PID 1, so the command is not: it acts on docker stop's SIGTERM.
  CHECK(Has(o, "--init"));
  CHECK(Has(o, "--cap-add=SYS_PTRACE"));
  CHECK(Has(o, "--cap-add=SYS_ADMIN"));
  CHECK(Has(o, "--cap-add=DAC_READ_SEARCH"));
  CHECK(Values(o, "--security-opt") == std::vector<std::string>{"seccomp=unconfined"});
  CHECK(Values(o, "--pull") == std::vector<std::string>{"missing"});
  CHECK(Values(o, "-w") == std::vector<std::string>{"/home/u/TensorRT-LLM"});
  // -it and --rm are decided by the script at run time, never baked into the options.
  CHECK_FALSE(Has(o, "-it"));
  CHECK_FALSE(Has(o, "-t"));
  CHECK_FALSE(Has(o, "--rm"));
  // No GPUs on the host: no GPU flag at all (both fail there).
  for (const std::string& word : o) {
    CHECK(word.find("--gpus") == std::string::npos);
    CHECK(word.find("--runtime") == std::string::npos);
  }
  CHECK_FALSE(Has(o, "--memory"));
  // Home and project at the same paths; the work dir is inside the project: one mount.
  CHECK(Values(o, "-v") ==
        std::vector<std::string>{"/home/u:/home/u", "/home/u/TensorRT-LLM:/home/u/TensorRT-LLM"});
  CHECK(Values(o, "-e") == std::vector<std::string>{"HOME_DIR=/home/u"});
}

TEST_CASE("RenderDockerRun: GPU flags follow the host", "[render_docker]") {
  DockerRunInput in = SampleInput();
  in.gpu_count = 8;
  in.nvidia_runtime = true;
  CHECK(Has(RenderDockerRun(in).options, "--runtime=nvidia"));
  CHECK_FALSE(Has(RenderDockerRun(in).options, "--gpus=all"));
  in.nvidia_runtime = false;
  CHECK(Has(RenderDockerRun(in).options, "--gpus=all"));
  CHECK_FALSE(Has(RenderDockerRun(in).options, "--runtime=nvidia"));
}

TEST_CASE("RenderDockerRun: models mount, LLM_MODELS_ROOT, custom_env, memory, pull",
          "[render_docker]") {
  DockerRunInput in = SampleInput();
  in.models_host_path = "/raid/models";
  in.llm_models_root = "/scratch/llm-models";
  in.env = {{"TLLM_LOG_LEVEL", "INFO"}, {"WEIRD", "a b'c\"$d"}};
  in.memory = "256m";
  in.pull = "never";
  in.work_dir = "/tmp/elsewhere/wd";
  in.extra_dirs = {"/opt/scripts", "/home/u/TensorRT-LLM/scripts"};
  DockerRun run = RenderDockerRun(in);
  const std::vector<std::string>& o = run.options;
  CHECK(Values(o, "-e") == std::vector<std::string>{"HOME_DIR=/home/u",
                                                    "LLM_MODELS_ROOT=/scratch/llm-models",
                                                    "TLLM_LOG_LEVEL=INFO", "WEIRD=a b'c\"$d"});
  // The work dir outside home and project is mounted; a custom_script dir inside the
  // project is not mounted twice.
  CHECK(Values(o, "-v") ==
        std::vector<std::string>{"/home/u:/home/u", "/home/u/TensorRT-LLM:/home/u/TensorRT-LLM",
                                 "/tmp/elsewhere/wd:/tmp/elsewhere/wd",
                                 "/raid/models:/scratch/llm-models", "/opt/scripts:/opt/scripts"});
  CHECK(Values(o, "--memory") == std::vector<std::string>{"256m"});
  CHECK(Values(o, "--memory-swap") == std::vector<std::string>{"256m"});
  CHECK(Values(o, "--pull") == std::vector<std::string>{"never"});
}

TEST_CASE("RenderDockerRun: a mount target is never given twice", "[render_docker]") {
  DockerRunInput in = SampleInput();
  in.repo_root = in.home_dir;  // the checkout is the home dir itself
  in.work_dir = in.home_dir + "/work_dirs/x";
  std::vector<std::string> mounts = Values(RenderDockerRun(in).options, "-v");
  CHECK(mounts == std::vector<std::string>{"/home/u:/home/u"});
}

TEST_CASE("RenderDockerRun: install steps unless skip_install", "[render_docker]") {
  DockerRunInput in = SampleInput();
  DockerRun with_install = RenderDockerRun(in);
  CHECK_THAT(with_install.payload, Catch::Contains("pip install -e ."));
  CHECK_THAT(with_install.payload, Catch::Contains("requirements-dev.txt"));
  CHECK_THAT(with_install.payload, Catch::Contains("import tensorrt_llm"));
  // The command is the payload's last part, verbatim.
  CHECK_THAT(with_install.payload, Catch::EndsWith("\n" + in.command));
  in.skip_install = true;
  DockerRun skipped = RenderDockerRun(in);
  CHECK(skipped.payload == in.command);
  CHECK_THAT(skipped.script, Catch::Contains("skip_install"));
}

TEST_CASE("RenderDockerRun: docker_cmd splits back into the exact argv", "[render_docker]") {
  DockerRunInput in = SampleInput();
  in.skip_install = true;
  in.command =
      "echo \"double $HOME\" 'single $HOME' `date` $(id -u); printf '%s\\n' \"it's\"\n"
      "echo second line && echo 'ünïcödé ✓' || exit 3";
  in.env = {{"K", "v with 'quotes' and \"doubles\""}};
  DockerRun run = RenderDockerRun(in);
  Result<std::vector<std::string>> words = SplitShellWords(run.command_line);
  REQUIRE(words.ok());
  std::vector<std::string> expected = {"docker", "run", "--rm"};
  expected.insert(expected.end(), run.options.begin(), run.options.end());
  expected.insert(expected.end(), {in.image, "bash", "-c", in.command});
  CHECK(words.value() == expected);
}

TEST_CASE("docker_cmd.sh: bash hands docker the exact argv, -it only with a terminal",
          "[render_docker]") {
  DockerRunInput in = SampleInput();
  in.skip_install = true;
  in.command = "echo \"$HOME\" 'it'\"'\"'s' `x` $(y)\nexit 7 # ✓";
  DockerRun run = RenderDockerRun(in);
  CHECK_THAT(run.script, Catch::StartsWith("#!/bin/bash\n"));
  // `docker` becomes a function that prints each argument NUL-terminated: exact bytes.
  std::string prelude = "docker() { printf '%s\\0' \"$@\"; }\n";
  std::string script = run.script;
  std::string::size_type at = script.find("exec docker run");
  REQUIRE(at != std::string::npos);
  script.erase(at, 5);  // drop "exec ": the function must run, not an executable
  std::vector<std::string> expected = {"run", "--rm"};
  expected.insert(expected.end(), run.options.begin(), run.options.end());
  expected.insert(expected.end(), {in.image, "bash", "-c", in.command});
  CHECK(SplitNul(BashOutput(prelude + script)) == expected);
  // The executor's environment keeps the container (no --rm) to read State.OOMKilled.
  std::vector<std::string> kept = expected;
  kept.erase(kept.begin() + 1);
  CHECK(SplitNul(BashOutput("export TRTLLM_RUN_KEEP_CONTAINER=1\n" + prelude + script)) == kept);
  // stdin was /dev/null above, so no -it. On a terminal (a pty from script(1)) the
  // script adds it, at run time.
  char path[] = "/tmp/render_docker_test_XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::string file = prelude + script;
  REQUIRE(::write(fd, file.data(), file.size()) == static_cast<ssize_t>(file.size()));
  ::close(fd);
  std::vector<std::string> on_tty =
      SplitNul(BashOutput("script -qec " + ShellQuote(std::string("bash ") + path) + " /dev/null"));
  ::unlink(path);
  REQUIRE(on_tty.size() > 3);
  CHECK(on_tty[0] == "run");
  CHECK(on_tty[1] == "--rm");
  CHECK(on_tty[2] == "-it");
}

TEST_CASE("RenderDockerBuild: same container options, the build command, its own name",
          "[render_docker]") {
  DockerRunInput in = SampleInput();
  DockerRun build = RenderDockerBuild(in);
  CHECK(Values(build.options, "--name") == std::vector<std::string>{in.container_name + "_build"});
  CHECK(build.payload == "python3 ./scripts/build_wheel.py --use_ccache");
  CHECK(Values(build.options, "-w") == std::vector<std::string>{in.repo_root});
}

TEST_CASE("DockerContainerName: model, work dir timestamp, random suffix", "[render_docker]") {
  std::string a = DockerContainerName("llama_3_1_8b", "/r/work_dirs/llama_3_1_8b_20260101_120000");
  std::string b = DockerContainerName("llama_3_1_8b", "/r/work_dirs/llama_3_1_8b_20260101_120000");
  CHECK_THAT(a, Catch::StartsWith("llama_3_1_8b_auto_test_20260101_120000_"));
  CHECK(a.size() == std::string("llama_3_1_8b_auto_test_20260101_120000_").size() + 6);
  CHECK(a != b);  // two runs from the same work dir name still differ
  CHECK_THAT(DockerContainerName("m", "/r/work_dirs/m_20260101_120000_2"),
             Catch::StartsWith("m_auto_test_20260101_120000_2_"));
  for (char c : DockerContainerName("", "/weird dir/X-Y")) {
    CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'));
  }
  std::set<std::string> names;
  for (int i = 0; i < 200; ++i) names.insert(DockerContainerName("m", "/w/m_1"));
  CHECK(names.size() == 200);
}

TEST_CASE("ValidateDockerPull and ValidateDockerMemory", "[render_docker]") {
  CHECK(ValidateDockerPull("never", "--docker-pull").ok());
  CHECK(ValidateDockerPull("missing", "--docker-pull").ok());
  CHECK(ValidateDockerPull("always", "--docker-pull").ok());
  Status bad = ValidateDockerPull("sometimes", "--docker-pull");
  CHECK(bad.code() == StatusCode::kInvalidInput);
  CHECK_THAT(bad.ToString(), Catch::Contains("--docker-pull 'sometimes'"));
  CHECK_THAT(bad.ToString(), Catch::Contains("never"));

  for (const char* ok : {"256m", "8g", "8G", "6m", "1073741824", "7000k", "6291456b"}) {
    INFO(ok);
    CHECK(ValidateDockerMemory(ok, "--docker-memory").ok());
  }
  for (const char* no : {"", "m", "12x", "5m", "1.5g", "-1g", "10mb", "99999999999999999g"}) {
    INFO(no);
    Status status = ValidateDockerMemory(no, "--docker-memory");
    CHECK(status.code() == StatusCode::kInvalidInput);
    CHECK_THAT(status.ToString(), Catch::Contains("--docker-memory"));
  }
}

}  // namespace
}  // namespace trtllm_run
