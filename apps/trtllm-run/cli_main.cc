// trtllm-run's entry point (trtllm_run/cli_main.h), compiled into libtrtllm_run_core:
// dispatches a subcommand from the table below. Each subcommand parses its options,
// builds the runtime and maps errors to exit codes (cli.h); the logic lives in libcore
// and the plugins.
#include <malloc.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "model/edit_distance.h"
#include "trtllm_run/cli_main.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/version.h"

namespace {

// A subcommand: its main parses its option table with cli::Parse first thing, which is
// how --help-man and --completion read every table (cli::SetDescribeHook).
struct Subcommand {
  const char* name;
  const char* description;
  int (*main)(int argc, char** argv);
};

const Subcommand kSubcommands[] = {
    {"run", "run one case and report its verdict (the default subcommand)",
     trtllm_run::cli::RunMain},
    {"plugins", "list the workflow and executor plugins found, and any that failed to load",
     trtllm_run::cli::PluginsMain},
    {"plan", "derive and render a case into its work dir without running it",
     trtllm_run::cli::PlanMain},
    {"stage", "run a TensorRT-LLM CI stage as CI does: shards, reruns, one merged JUnit",
     trtllm_run::cli::StageMain},
    {"exec", "run a work dir prepared by `trtllm-run plan` (one run per work dir)",
     trtllm_run::cli::ExecMain},
    {"status", "show what a work dir's run is doing, or its verdict", trtllm_run::cli::StatusMain},
    {"attach", "follow a work dir's log until its verdict; exit with the verdict's code",
     trtllm_run::cli::AttachMain},
    {"cancel", "stop a work dir's running job", trtllm_run::cli::CancelMain},
    {"release", "end the Slurm allocations persistent mode holds for later runs",
     trtllm_run::cli::ReleaseMain},
    {"list", "list the recent work dirs of a repo: workflow, scenario, job id, status, age",
     trtllm_run::cli::ListMain},
    {"logs", "print a work dir's log (-f: follow it until the verdict; --tail N)",
     trtllm_run::cli::LogsMain},
    {"history", "what past runs say: a test's pass rate and durations, flaky tests, durations",
     trtllm_run::cli::HistoryMain},
    {"perf", "compare two runs' perf metrics (perf compare RUN_A RUN_B); check the perf gate",
     trtllm_run::cli::PerfMain},
    {"report", "write the self-contained HTML report of a finished run, cases run or stage",
     trtllm_run::cli::ReportMain},
    {"env", "probe Slurm (slurm_env.json) here or on a login node; --env-check: host facts",
     trtllm_run::cli::EnvMain},
    {"mcp", "serve the Model Context Protocol on stdio: tools for coding agents",
     trtllm_run::cli::McpMain},
};

void PrintUsage(std::ostream& out) {
  const int width = trtllm_run::cli::HelpWidth();
  out << "usage: trtllm-run [SUBCOMMAND] [options]\n\n"
      << trtllm_run::cli::Wrap(
             "Runs one TensorRT-LLM case (pytest, trtllm-bench, trtllm-eval or any command) on "
             "this host, in Docker or on Slurm, and reports a verdict as its exit code.",
             width, 0, 0)
      << "\n\nsubcommands:\n";
  for (const Subcommand& subcommand : kSubcommands) {
    std::string name = std::string("  ") + subcommand.name;
    name.resize(std::max<std::size_t>(name.size() + 2, 12), ' ');
    out << name << trtllm_run::cli::Wrap(subcommand.description, width, 0, 12) << "\n";
  }
  out << "\n"
      << trtllm_run::cli::Wrap(std::string("exit codes: ") + trtllm_run::cli::ExitCodesText(),
                               width, 0, 2)
      << "\n"
      << trtllm_run::cli::Wrap(std::string("durations: ") + trtllm_run::cli::DurationsText(), width,
                               0, 2)
      << "\n"
      << trtllm_run::cli::Wrap(std::string("files: ") + trtllm_run::cli::FilesText(), width, 0, 2)
      << "\n'trtllm-run SUBCOMMAND --help' (or 'trtllm-run help SUBCOMMAND') lists a subcommand's "
         "options; 'trtllm-run --help-man' prints the man page, 'trtllm-run --completion "
         "bash|zsh' the completion; 'trtllm-run -V' the version.\n";
}

// Every subcommand's table, read through the describe hook (nothing runs).
std::vector<trtllm_run::cli::CommandDoc> DescribeSubcommands() {
  std::vector<trtllm_run::cli::CommandDoc> docs;
  for (const Subcommand& subcommand : kSubcommands) {
    trtllm_run::cli::CommandDoc described;
    described.name = subcommand.name;
    trtllm_run::cli::SetDescribeHook(
        [&](const trtllm_run::cli::CommandDoc& doc) { described = doc; });
    char* argv[] = {const_cast<char*>(subcommand.name), nullptr};
    subcommand.main(1, argv);
    trtllm_run::cli::SetDescribeHook(nullptr);
    described.description = subcommand.description;
    docs.push_back(described);
  }
  return docs;
}

// --help-man, --completion SHELL: the generated documents on stdout.
int PrintGenerated(int argc, char** argv) {
  if (std::strcmp(argv[1], "--help-man") == 0) {
    std::cout << trtllm_run::cli::ManPage(DescribeSubcommands(), trtllm_run::Version());
    return 0;
  }
  const std::string shell = argc >= 3 ? argv[2] : "";
  if (shell == "bash") {
    std::cout << trtllm_run::cli::BashCompletion(DescribeSubcommands());
  } else if (shell == "zsh") {
    std::cout << trtllm_run::cli::ZshCompletion(DescribeSubcommands());
  } else {
    std::cerr << "trtllm-run: error: --completion takes bash or zsh, not '" << shell << "'\n";
    return trtllm_run::kExitBadInput;
  }
  return 0;
}

}  // namespace

int trtllm_run_cli_main(int argc, char** argv) {
  // A closed stdout (e.g. `| head`) must not kill trtllm-run while a job runs.
  ::signal(SIGPIPE, SIG_IGN);
  // `run --cases` keeps a thread per case in flight, mostly waiting; glibc gives threads up
  // to 8 malloc arenas per core, each keeping what its threads freed (100 judged cases:
  // 150 MB with the default on 2 cores, 62 MB with 2 arenas; a login node has far more
  // cores). $MALLOC_ARENA_MAX, when set, is the user's choice and wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) ::mallopt(M_ARENA_MAX, 2);
  // `help` and `help SUBCOMMAND`, as git and pip take them.
  if (argc >= 2 && std::strcmp(argv[1], "help") == 0) {
    if (argc == 2) {
      PrintUsage(std::cout);
      return 0;
    }
    char help_flag[] = "--help";
    char* help_argv[] = {argv[2], help_flag, nullptr};
    for (const Subcommand& subcommand : kSubcommands) {
      if (std::strcmp(argv[2], subcommand.name) == 0) {
        trtllm_run::cli::SetCommandDescription(subcommand.description);
        return subcommand.main(2, help_argv);
      }
    }
  }
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    PrintUsage(std::cout);
    return 0;
  }
  if (argc >= 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0 ||
                    std::strcmp(argv[1], "version") == 0)) {
    std::cout << "trtllm-run " << trtllm_run::Version() << " (plugin API "
              << TRTLLM_RUN_PLUGIN_API_VERSION << ")\n";
    return 0;
  }
  if (argc >= 2 &&
      (std::strcmp(argv[1], "--help-man") == 0 || std::strcmp(argv[1], "--completion") == 0)) {
    return PrintGenerated(argc, argv);
  }
  if (argc < 2) {
    PrintUsage(std::cerr);
    return trtllm_run::kExitBadInput;
  }
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) trtllm_run::cli::SetJsonErrors(true);
  }
  for (const Subcommand& subcommand : kSubcommands) {
    if (std::strcmp(argv[1], subcommand.name) == 0) {
      trtllm_run::cli::SetCommandDescription(subcommand.description);
      return subcommand.main(argc - 1, argv + 1);
    }
  }
  if (argv[1][0] == '-') {  // `run` is the default
    trtllm_run::cli::SetCommandDescription(kSubcommands[0].description);
    return trtllm_run::cli::RunMain(argc, argv);
  }
  std::vector<std::string> names;
  for (const Subcommand& subcommand : kSubcommands) names.push_back(subcommand.name);
  const std::string closest = trtllm_run::ClosestName(argv[1], names);
  std::string hint = "subcommands: ";
  for (const std::string& name : names) hint += name + (name == names.back() ? "" : ", ");
  if (!closest.empty()) hint = "did you mean '" + closest + "'? " + hint;
  return trtllm_run::cli::Fail(
      "", trtllm_run::Status::InvalidInput("unknown subcommand '" + std::string(argv[1]) + "'",
                                           hint + "; 'trtllm-run --help' describes them"));
}
