// The CLI's consistency across subcommands, through the real binary: one duration syntax
// for every time flag, the same SSH flags for env/plan/run, sbatch's short aliases,
// did-you-mean, exit 2 naming a missing input file, --json (an error object on bad
// input) on every subcommand, and --help wrapped to the terminal.
#include <rapidjson/document.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / name)
      .lexically_normal()
      .string();
}

// A writable copy of the fake TensorRT-LLM tree.
struct Repo {
  Repo() : dir("trtllm_run_cli_consistency") {
    path = dir.path() + "/TensorRT-LLM";
    fs::copy(Fixture("trtllm"), path, fs::copy_options::recursive);
  }
  TempDir dir;
  std::string path;
};

CliRun Cli(std::vector<std::string> args, std::vector<std::pair<std::string, std::string>> env = {},
           std::vector<std::string> unset_env = {}) {
  CliOptions options;
  options.args = std::move(args);
  options.env = std::move(env);
  options.unset_env = std::move(unset_env);
  options.timeout_seconds = 60;
  return RunCli(options);
}

// `plan` of a custom command on local_slurm against the saved cluster_a probe.
CliRun PlanSlurm(const Repo& repo, std::vector<std::string> extra) {
  std::vector<std::string> args = {"plan",
                                   "--repo-root",
                                   repo.path,
                                   "--custom-cmd",
                                   "echo hi",
                                   "--scenario",
                                   "local_slurm",
                                   "--slurm-env-file",
                                   Fixture("slurm_env/cluster_a.json"),
                                   "--llm-models-root",
                                   "/models",
                                   "--models-path",
                                   "/data/models"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Cli(args);
}

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  return doc;
}

rapidjson::Document JobSpecOf(const std::string& work_dir) {
  return ParseJson(ReadTextFile(work_dir + "/job_spec.json"));
}

std::string Str(const rapidjson::Value& object, const char* key) {
  return object.IsObject() && object.HasMember(key) && object[key].IsString()
             ? object[key].GetString()
             : "<missing>";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The flags listed under the help group whose caption starts with `caption`.
std::set<std::string> FlagsOfGroup(const std::string& help, const std::string& caption) {
  std::set<std::string> flags;
  bool inside = false;
  for (const std::string& line : Lines(help)) {
    if (!line.empty() && line[0] != ' ') inside = line.rfind(caption, 0) == 0;
    if (!inside) continue;
    std::size_t at = line.find("--");
    std::size_t first = line.find_first_not_of(' ');  // flag lines: "  -p, --x", "      --y"
    if (first == std::string::npos || first > 6 || line[first] != '-' || at == std::string::npos) {
      continue;
    }
    flags.insert(line.substr(at, line.find_first_of(" [", at) - at));
  }
  return flags;
}

// A PATH with the shell tools the probe script needs, and no Slurm command.
struct NoSlurmPath {
  NoSlurmPath() {
    for (const char* tool : {"bash", "mktemp", "rm", "cat", "wc", "id", "timeout", "sed"}) {
      for (const char* dir : {"/usr/bin/", "/bin/"}) {
        if (fs::exists(std::string(dir) + tool)) {
          fs::create_symlink(std::string(dir) + tool, fs::path(bin.path()) / tool);
          break;
        }
      }
    }
  }
  TempDir bin;
};

}  // namespace

TEST_CASE("cli: --time-limit takes the duration syntax of --monitor-timeout, rendered for Slurm",
          "[cli]") {
  struct Case {
    std::string given, rendered;
  };
  for (const Case& c : std::vector<Case>{{"2h", "02:00:00"},
                                         {"90m", "01:30:00"},
                                         {"5400s", "01:30:00"},
                                         {"01:15:00", "01:15:00"},
                                         {"45", "45"}}) {  // Slurm's own forms stay as given
    DYNAMIC_SECTION("--time-limit " << c.given) {
      Repo repo;
      CliRun run = PlanSlurm(
          repo, {"--partition", "batch", "--time-limit", c.given, "--monitor-timeout", "30m"});
      INFO(run.Describe());
      REQUIRE(run.exit_code == 0);
      std::string wd = FindSingleWorkDir(repo.path);
      REQUIRE_FALSE(wd.empty());
      rapidjson::Document spec = JobSpecOf(wd);
      CHECK(Str(spec["slurm_params"], "time_limit") == c.rendered);
      CHECK_THAT(ReadTextFile(Str(spec, "script_path")),
                 Catch::Contains("#SBATCH --time=" + c.rendered + "\n"));
    }
  }
  SECTION("a day or more is D-HH:MM:SS") {
    Repo repo;
    CliRun run = PlanSlurm(repo, {"--partition", "batch", "--alloc-time-limit", "36h",
                                  "--time-limit", "8h", "--persistent-mode"});
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    rapidjson::Document spec = JobSpecOf(FindSingleWorkDir(repo.path));
    CHECK(Str(spec["slurm_params"], "time_limit") == "08:00:00");
    CHECK(Str(spec, "alloc_time_limit") == "1-12:00:00");
  }
  SECTION("anything else is exit 2 naming the flag and the forms, no work dir") {
    Repo repo;
    CliRun run = PlanSlurm(repo, {"--partition", "batch", "--time-limit", "2 hours"});
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text,
               Catch::Contains("invalid time_limit (from --time-limit) '2 hours'"));
    CHECK_THAT(run.stderr_text, Catch::Contains("2h, 90m, 3600s or HH:MM:SS"));
    CHECK_FALSE(fs::exists(repo.path + "/work_dirs"));
  }
  SECTION("the other time flags take durations too") {
    TempDir root;
    CliRun run = Cli({"run", "--custom-cmd", "true", "--scenario", "local_direct", "--repo-root",
                      root.path(), "--kill-grace", "1m", "--monitor-timeout", "2m"});
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CliRun bad =
        Cli({"run", "--custom-cmd", "true", "--repo-root", root.path(), "--kill-grace", "soon"});
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.stderr_text, Catch::Contains("--kill-grace 'soon'"));
  }
}

TEST_CASE("cli: sbatch's short aliases -p -A -t -J", "[cli]") {
  Repo repo;
  CliRun run = PlanSlurm(repo, {"-p", "small", "-A", "team_b", "-t", "1h", "-J", "shortcase"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  std::string wd = FindSingleWorkDir(repo.path);
  REQUIRE_FALSE(wd.empty());
  CHECK(fs::path(wd).filename().string().rfind("shortcase_", 0) == 0);
  rapidjson::Document spec = JobSpecOf(wd);
  CHECK(Str(spec["slurm_params"], "partition") == "small");
  CHECK(Str(spec["slurm_params"], "account") == "team_b");
  CHECK(Str(spec["slurm_params"], "time_limit") == "01:00:00");
  // env validates with the same letters.
  CliRun help = Cli({"env", "--help"});
  CHECK_THAT(help.stdout_text, Catch::Contains("  --partition NAME (-p)"));
  CHECK_THAT(help.stdout_text, Catch::Contains("  --account NAME (-A)"));
}

TEST_CASE("cli: env, plan and run take the same SSH flags, and plan hands them to the job",
          "[cli]") {
  const std::string caption = "Remote login node (SSH";
  std::set<std::string> env = FlagsOfGroup(Cli({"env", "--help"}).stdout_text, caption);
  std::set<std::string> plan = FlagsOfGroup(Cli({"plan", "--help"}).stdout_text, caption);
  std::set<std::string> run = FlagsOfGroup(Cli({"run", "--help"}).stdout_text, caption);
  for (const char* flag :
       {"--ssh-host", "--ssh-port", "--identity", "--ssh-option", "--ssh-config-file",
        "--slurm-user", "--user-name", "--slurm-cluster", "--password-file"}) {
    CHECK(env.count(flag) == 1);
  }
  CHECK(env == plan);
  CHECK(env == run);

  Repo repo;
  const std::string key = repo.dir.path() + "/id_test";
  WriteTextFile(key, "not a real key\n");
  CliRun planned = Cli({"plan",
                        "--repo-root",
                        repo.path,
                        "--bench-cmd",
                        "trtllm-bench --model /m/Llama-3.1-8B throughput --tp 2",
                        "--scenario",
                        "remote_slurm",
                        "--slurm-env-file",
                        Fixture("slurm_env/remote_b.json"),
                        "--llm-models-root",
                        "/models",
                        "--remote-repo-path",
                        "/lustre/bob/trt",
                        "--ssh-host",
                        "bob@login.example.com",
                        "--ssh-port",
                        "2222",
                        "--identity",
                        key,
                        "--ssh-option",
                        "ServerAliveInterval=15",
                        "--ssh-option",
                        "Compression=yes"});
  INFO(planned.Describe());
  REQUIRE(planned.exit_code == 0);
  rapidjson::Document spec = JobSpecOf(FindSingleWorkDir(repo.path));
  CHECK(Str(spec, "ssh_port") == "2222");
  CHECK(Str(spec, "ssh_identity_file") == key);
  CHECK(Str(spec, "ssh_options") == "ServerAliveInterval=15\nCompression=yes\n");
}

TEST_CASE("cli: env exit codes and formats follow the documented table", "[env]") {
  SECTION("no Slurm on the host: exit 3 (the probe could not run), not 1 (FAILED)") {
    NoSlurmPath path;
    CliRun run = Cli({"env"}, {{"PATH", path.bin.path()}});
    INFO(run.Describe());
    CHECK(run.exit_code == 3);
    CHECK_THAT(run.stdout_text, Catch::Contains("\"SLURM client tools not found\""));
    CHECK_THAT(run.stderr_text, Catch::Contains("no Slurm client tools"));
    CHECK_THAT(run.stderr_text, Catch::Contains("--env-check"));
  }
  SECTION("--format text with --env-check prints text") {
    CliRun run = Cli({"env", "--env-check", "--format", "text"});
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CHECK(run.stdout_text.rfind("gpu_count: ", 0) == 0);
    CHECK_THAT(run.stdout_text, Catch::Contains("\nslurm_available: "));
    CHECK_THAT(run.stdout_text, Catch::Contains("\narch: "));
    CHECK(run.stdout_text.find('{') == std::string::npos);
    CliRun json = Cli({"env", "--env-check", "--json"});
    CHECK(json.exit_code == 0);
    CHECK(ParseJson(json.stdout_text).IsObject());
  }
  SECTION("the table is in the README") {
    const std::string readme =
        ReadTextFile((fs::path(TRTLLM_RUN_SOURCE_DIR) / "README.md").lexically_normal().string());
    CHECK_THAT(readme, Catch::Contains("| `trtllm-run env` exit |"));
  }
}

TEST_CASE("cli: a missing input file is exit 2 naming the file and the flag", "[cli]") {
  TempDir root;
  const std::string missing = root.path() + "/no_such_file.yaml";
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases = {
      {{"run", "--request", missing}, "--request"},
      {{"run", "--cases", missing, "--repo-root", root.path()}, "--cases"},
      {{"plan", "--custom-cmd", "true", "--slurm-env-file", missing}, "--slurm-env-file"},
      {{"run", "--custom-cmd", "true", "--password-file", missing}, "--password-file"},
      {{"plan", "--custom-cmd", "true", "--identity", missing}, "--identity"},
      {{"plan", "--custom-cmd", "true", "--ssh-config-file", missing}, "--ssh-config-file"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.args[0] << " " << c.flag) {
      CliOptions options;
      options.args = c.args;
      options.cwd = root.path();
      options.timeout_seconds = 60;
      CliRun run = RunCli(options);
      INFO(run.Describe());
      CHECK(run.exit_code == 2);
      CHECK_THAT(run.stderr_text, Catch::Contains(c.flag + ": cannot read " + missing +
                                                  ": No such file or directory"));
      CHECK_FALSE(fs::exists(root.path() + "/work_dirs"));
    }
  }
  SECTION("a directory is not a file") {
    CliRun run = Cli({"run", "--request", root.path()});
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text,
               Catch::Contains("--request: cannot read " + root.path() + ": Is a directory"));
  }
}

TEST_CASE("cli: --json on every subcommand, an error object on bad input", "[cli]") {
  for (const char* subcommand : {"run", "plan", "exec", "status", "attach", "cancel", "release",
                                 "env", "plugins", "stage", "perf"}) {
    DYNAMIC_SECTION(subcommand) {
      CliRun run = Cli({subcommand, "--json", "--no-such-flag"});
      INFO(run.Describe());
      CHECK(run.exit_code == 2);
      rapidjson::Document doc = ParseJson(run.stdout_text);
      REQUIRE(doc.IsObject());
      REQUIRE(doc.HasMember("error"));
      CHECK(Str(doc["error"], "subcommand") == subcommand);
      CHECK(doc["error"]["exit_code"].GetInt() == 2);
      CHECK_THAT(Str(doc["error"], "message"), Catch::Contains("'--no-such-flag'"));
    }
  }
  SECTION("bad input found after parsing, and an unknown subcommand") {
    TempDir root;
    CliRun run = Cli({"run", "--json", "--request", root.path() + "/none.yaml"});
    CHECK(run.exit_code == 2);
    CHECK_THAT(Str(ParseJson(run.stdout_text)["error"], "message"), Catch::Contains("none.yaml"));
    CliRun unknown = Cli({"stauts", "--json"});
    CHECK(unknown.exit_code == 2);
    CHECK_THAT(Str(ParseJson(unknown.stdout_text)["error"], "hint"),
               Catch::Contains("did you mean 'status'?"));
  }
  SECTION("the documents of plugins, plan and release --list") {
    rapidjson::Document plugins = ParseJson(Cli({"plugins", "--json"}).stdout_text);
    REQUIRE(plugins.IsObject());
    CHECK(plugins["plugins"].IsArray());
    CHECK(plugins["plugins"].Size() > 0);
    TempDir state;
    CliRun release = Cli({"release", "--list", "--json"}, {{"XDG_STATE_HOME", state.path()}});
    INFO(release.Describe());
    rapidjson::Document held = ParseJson(release.stdout_text);
    REQUIRE(held.IsObject());
    CHECK(held["allocations"].IsArray());
    Repo repo;
    CliRun plan = PlanSlurm(repo, {"--partition", "batch", "--json"});
    INFO(plan.Describe());
    REQUIRE(plan.exit_code == 0);
    rapidjson::Document planned = ParseJson(plan.stdout_text);
    REQUIRE(planned.IsObject());
    CHECK(Str(planned, "scenario") == "local_slurm");
    CHECK(Str(planned, "work_dir") == FindSingleWorkDir(repo.path));
    CHECK(Str(planned["job_spec"], "scenario") == "local_slurm");
    CHECK_THAT(plan.stderr_text, Catch::Contains("Workflow: custom"));
  }
}

TEST_CASE("cli: did-you-mean for mistyped flags and subcommands", "[cli]") {
  CliRun flag = Cli({"run", "--partiton", "batch"});
  CHECK(flag.exit_code == 2);
  CHECK_THAT(flag.stderr_text, Catch::Contains("unknown option '--partiton'"));
  CHECK_THAT(flag.stderr_text, Catch::Contains("did you mean '--partition'?"));
  CliRun env = Cli({"env", "--formt", "text"});
  CHECK(env.exit_code == 2);
  CHECK_THAT(env.stderr_text, Catch::Contains("did you mean '--format'?"));
  CliRun subcommand = Cli({"attahc", "/tmp"});
  CHECK(subcommand.exit_code == 2);
  CHECK_THAT(subcommand.stderr_text, Catch::Contains("unknown subcommand 'attahc'"));
  CHECK_THAT(subcommand.stderr_text, Catch::Contains("did you mean 'attach'?"));
  CliRun far = Cli({"run", "--zzzzzzzz"});
  CHECK(far.exit_code == 2);
  CHECK_THAT(far.stderr_text, !Catch::Contains("did you mean"));
}

TEST_CASE("cli: --help wraps to the terminal width and never splits a word", "[cli]") {
  // The words of one long help text, to find again whole in every width.
  const std::vector<std::string> words = {"<repo>/work_dirs/cases_<time>/result.json,",
                                          "OUT_OF_MEMORY", "HANG_DETECTED", "CANCELLED"};
  for (int width : {50, 80, 140}) {
    DYNAMIC_SECTION("COLUMNS=" << width) {
      CliRun run = Cli({"run", "--help"}, {{"COLUMNS", std::to_string(width)}});
      REQUIRE(run.exit_code == 0);
      std::size_t longest = 0;
      for (const std::string& line : Lines(run.stdout_text)) {
        bool one_word = line.find_first_not_of(' ') != std::string::npos &&
                        line.find(' ', line.find_first_not_of(' ')) == std::string::npos;
        if (!one_word) CHECK(line.size() <= static_cast<std::size_t>(width));
        longest = std::max(longest, line.size());
      }
      CHECK(longest > static_cast<std::size_t>(width) - 12);  // the width is used
      for (const std::string& word : words) {
        CHECK_THAT(run.stdout_text, Catch::Contains(word));
      }
    }
  }
  SECTION("80 columns when stdout is not a terminal and COLUMNS is unset") {
    CliRun run = Cli({"plan", "--help"}, {}, {"COLUMNS"});
    REQUIRE(run.exit_code == 0);
    for (const std::string& line : Lines(run.stdout_text)) CHECK(line.size() <= 80);
  }
  SECTION("the terminal's width (TIOCGWINSZ) on a terminal") {
    // script(1) gives trtllm-run a pseudo-terminal of 120 columns.
    CliOptions options;
    options.program = "/usr/bin/script";
    options.args = {"-qec",
                    "stty cols 120 rows 40; exec " + std::string(TRTLLM_RUN_BIN) + " run --help",
                    "/dev/null"};
    options.unset_env = {"COLUMNS"};
    options.timeout_seconds = 60;
    CliRun tty = RunCli(options);
    INFO(tty.Describe());
    REQUIRE(tty.exit_code == 0);
    std::size_t longest = 0;
    for (const std::string& line : Lines(tty.stdout_text)) {
      std::string text = line;
      if (!text.empty() && text.back() == '\r') text.pop_back();
      longest = std::max(longest, text.size());
    }
    CHECK(longest > 100);
    CHECK(longest <= 120);
  }
}

}  // namespace trtllm_run_test
