// libpq is loaded only when a PostgreSQL history store is used (issue 27 item 3): the real
// binary, its core library and its plugins do not name it as a dependency, a run with the
// SQLite store never loads it, and on a host where libpq.so.5 cannot be loaded (here: an
// empty file bind-mounted over it in a private mount namespace, as root) a SQLite run still
// works while a PostgreSQL URL is refused with exit 2, naming the library and the package.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;

namespace trtllm_run_test {
namespace {

// The built files the dynamic loader reads at every start: the CLI, the core library
// and the built-in plugins.
std::vector<std::string> StartFiles() {
  const fs::path bin = TRTLLM_RUN_BIN;
  const fs::path lib = bin.parent_path().parent_path() / "lib";
  std::vector<std::string> files = {bin.string(), (lib / "libtrtllm_run_core.so").string()};
  for (const fs::directory_entry& entry : fs::directory_iterator(lib / "trtllm-run/plugins")) {
    if (entry.path().extension() == ".so") files.push_back(entry.path().string());
  }
  return files;
}

TEST_CASE("libpq loading: no start file of trtllm-run needs libpq", "[run_weight][history]") {
  const std::vector<std::string> files = StartFiles();
  REQUIRE(files.size() >= 3);  // the CLI, the core, at least one plugin
  for (const std::string& file : files) {
    int status = 0;
    const std::string needed = Shell("readelf -d '" + file + "' | grep NEEDED", &status);
    INFO(file << ":\n" << needed);
    REQUIRE(needed.find("libc.so") != std::string::npos);  // readelf read it
    CHECK(needed.find("libpq") == std::string::npos);
  }
}

TEST_CASE("libpq loading: a run with the SQLite store does not load libpq",
          "[run_weight][history]") {
  TempDir root("sqlite_only_run");
  CliOptions options;
  options.args = {"run",          "--scenario", "local_direct",
                  "--custom-cmd", "true",       "--repo-root",
                  root.path(),    "--history",  root.path() + "/history.sqlite"};
  // The dynamic loader names every library it loads (at start and by dlopen) on stderr.
  options.env = {{"LD_DEBUG", "files"}};
  CliRun run = RunCli(options);
  INFO(run.Describe().substr(0, 4000));
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.stderr_text.find("libtrtllm_run_core.so") != std::string::npos);  // it did name
  REQUIRE(run.stderr_text.find("libsqlite3.so") != std::string::npos);
  CHECK(run.stderr_text.find("libpq.so") == std::string::npos);
}

// The file the loader would open for libpq.so.5 ("" when this host has none).
std::string LibPqFile() {
  const std::string line = Shell("ldconfig -p | grep -m1 'libpq.so.5 (libc6,x86-64)'");
  const std::size_t arrow = line.find("=> ");
  if (arrow == std::string::npos) return "";
  std::string path = line.substr(arrow + 3);
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return fs::canonical(path).string();
}

// trtllm-run `args` in a private mount namespace where `libpq` is an empty file.
CliRun RunWithoutLibPq(const std::string& libpq, const std::string& empty,
                       const std::vector<std::string>& args) {
  CliOptions options;
  options.program = "/usr/bin/unshare";
  options.args = {
      "--mount", "/bin/sh", "-c",  "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
      "sh",      empty,     libpq, TRTLLM_RUN_BIN};
  options.args.insert(options.args.end(), args.begin(), args.end());
  return RunCli(options);
}

TEST_CASE("libpq loading: without libpq.so.5 a SQLite run works and a PostgreSQL store is exit 2",
          "[run_weight][history]") {
  if (::geteuid() != 0) {
    WARN("skipped: hiding libpq.so.5 with a bind mount needs root (CI runs as root)");
    return;
  }
  const std::string libpq = LibPqFile();
  REQUIRE_FALSE(libpq.empty());
  TempDir root("libpq_hidden");
  const std::string empty = root.path() + "/empty.so";
  WriteTextFile(empty, "");
  fs::create_directories(root.path() + "/a");
  fs::create_directories(root.path() + "/b");

  // SQLite: the whole run, libpq never touched (before: the loader refused to start
  // trtllm-run at all, "error while loading shared libraries: libpq.so.5", exit 127).
  CliRun sqlite =
      RunWithoutLibPq(libpq, empty,
                      {"run", "--scenario", "local_direct", "--custom-cmd", "true", "--repo-root",
                       root.path() + "/a", "--history", root.path() + "/history.sqlite"});
  INFO(sqlite.Describe());
  CHECK(sqlite.exit_code == 0);
  CHECK(fs::exists(root.path() + "/history.sqlite"));

  // PostgreSQL: refused before anything is planned or written, naming what to install.
  // (No server is needed: the URL is checked, with libpq, before the run.)
  CliRun postgres = RunWithoutLibPq(
      libpq, empty,
      {"run", "--scenario", "local_direct", "--custom-cmd", "true", "--repo-root",
       root.path() + "/b", "--history", "postgresql://trtllm@127.0.0.1:5499/nowhere"});
  INFO(postgres.Describe());
  CHECK(postgres.exit_code == 2);
  CHECK_THAT(postgres.stderr_text, Catch::Contains("libpq.so.5"));
  CHECK_THAT(postgres.stderr_text, Catch::Contains("libpq5"));
  CHECK_THAT(postgres.stderr_text, Catch::Contains("postgresql://trtllm@127.0.0.1:5499/nowhere"));
  CHECK_FALSE(fs::exists(root.path() + "/b/work_dirs"));
}

}  // namespace
}  // namespace trtllm_run_test
