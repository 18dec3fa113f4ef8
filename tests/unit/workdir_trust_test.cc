// What the work dir readers accept from a work dir: Slurm job id syntax, container names
// of a run's form, files inside the work dir; and the environment children get.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "render_docker.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

TEST_CASE("IsSlurmJobId accepts job, array task and het job ids only", "[workdir][slurm]") {
  for (const char* good : {"1", "123", "123_4", "123+1", "123_4+0"}) {
    INFO(good);
    CHECK(IsSlurmJobId(good));
  }
  for (const char* bad : {"", "--user=root", "-1", "123 456", "123,456", "123_", "_4", "+1", "12a",
                          "123\n", "123+1_4", "123__4", "123456789012345678901"}) {
    INFO(bad);
    CHECK_FALSE(IsSlurmJobId(bad));
  }
}

TEST_CASE("IsDockerContainerNameFor knows a run's generated names", "[workdir][docker]") {
  const std::string work_dir = "/r/work_dirs/llama_20260101_120000_2";
  std::string name = DockerContainerName("llama", work_dir);
  CHECK(IsDockerContainerNameFor(name, "llama", work_dir));
  CHECK(IsDockerContainerNameFor(name + "_build", "llama", work_dir));
  CHECK(IsDockerContainerNameFor("llama_auto_test_20260101_120000_2_0a9f3c", "llama", work_dir));
  CHECK_FALSE(IsDockerContainerNameFor(name + "x", "llama", work_dir));
  CHECK_FALSE(
      IsDockerContainerNameFor("llama_auto_test_20260101_120000_2_0A9F3C", "llama", work_dir));
  CHECK_FALSE(IsDockerContainerNameFor("--all", "llama", work_dir));
  CHECK_FALSE(IsDockerContainerNameFor(name, "llama", "/r/work_dirs/llama_20260101_120001"));
  CHECK_FALSE(IsDockerContainerNameFor(name, "other", work_dir));
}

TEST_CASE("ChildEnvironment leaves trtllm-run's secrets out", "[workdir][process]") {
  ::setenv("TRTLLM_RUN_SLURM_PASSWORD", "s3cret", 1);
  ::setenv("TRTLLM_RUN_SLURM_PASSWORD_FILE", "/p", 1);
  ::setenv("TRTLLM_RUN_SSH_ASKPASS_SECRET", "a", 1);
  ::setenv("TRTLLM_RUN_ENV_TEST_KEEP", "kept", 1);
  std::vector<std::string> env = ChildEnvironment({{"A", "1"}, {"A", "2"}});
  auto has = [&](const std::string& entry) {
    return std::find(env.begin(), env.end(), entry) != env.end();
  };
  for (const std::string& entry : env) {
    CHECK_FALSE(IsTrtllmRunSecret(entry.substr(0, entry.find('='))));
  }
  CHECK(has("TRTLLM_RUN_ENV_TEST_KEEP=kept"));
  CHECK(has("A=2"));
  CHECK_FALSE(has("A=1"));
  // An explicit override is passed as given (the askpass hand-over to ssh).
  env = ChildEnvironment({{"TRTLLM_RUN_SSH_ASKPASS_SECRET", "given"}});
  CHECK(has("TRTLLM_RUN_SSH_ASKPASS_SECRET=given"));
  for (const char* name : {"TRTLLM_RUN_SLURM_PASSWORD", "TRTLLM_RUN_SLURM_PASSWORD_FILE",
                           "TRTLLM_RUN_SSH_ASKPASS_SECRET", "TRTLLM_RUN_ENV_TEST_KEEP"}) {
    ::unsetenv(name);
  }
}

TEST_CASE("OpenWorkDirFile opens regular files inside the work dir only", "[workdir]") {
  char pattern[] = "/tmp/workdir_trust_test_XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  const std::string dir = pattern;
  REQUIRE(WriteFileAtomic(dir + "/a.log", "log\n").ok());
  fs::create_directories(dir + "/sub");
  REQUIRE(WriteFileAtomic(dir + "/sub/b.log", "b\n").ok());
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0644) == 0);
  fs::create_symlink("/etc/passwd", dir + "/link");
  fs::create_directory_symlink("/etc", dir + "/etc_link");

  auto opens = [&](const std::string& path, const std::string& recorded = "") {
    Result<int> fd = OpenWorkDirFile(dir, path, recorded);
    if (fd.ok()) ::close(fd.value());
    return fd.ok();
  };
  CHECK(opens(dir + "/a.log"));
  CHECK(opens("a.log"));
  CHECK(opens(dir + "/sub/b.log"));
  CHECK(opens("/elsewhere/work_dir/a.log", "/elsewhere/work_dir"));  // a copy reads its own
  CHECK_FALSE(opens("/etc/passwd"));
  CHECK_FALSE(opens(dir + "/../" + fs::path(dir).filename().string() + "_x/a.log"));
  CHECK_FALSE(opens(dir + "/link"));
  CHECK_FALSE(opens(dir + "/etc_link/passwd"));
  CHECK_FALSE(opens(dir + "/fifo"));  // and returns at once
  CHECK_FALSE(opens(dir));
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

}  // namespace
}  // namespace trtllm_run
