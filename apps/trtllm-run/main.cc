// trtllm-run: dispatches a subcommand from the table below. Each subcommand parses its
// options, builds the runtime and maps errors to exit codes (cli.h); the logic lives
// in libcore and the plugins.
#include <signal.h>

#include <cstring>
#include <iomanip>
#include <iostream>

#include "cli.h"
#include "trtllm_run/plugin_api.h"
#include "trtllm_run/version.h"

namespace {

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
    {"env", "probe Slurm (slurm_env.json) here or on a login node; --env-check: host facts",
     trtllm_run::cli::EnvMain},
    {"mcp", "serve the Model Context Protocol on stdio: tools for coding agents",
     trtllm_run::cli::McpMain},
};

void PrintUsage(std::ostream& out) {
  out << "usage: trtllm-run [SUBCOMMAND] [options]\n\n"
      << "Runs one TensorRT-LLM case (pytest, trtllm-bench, trtllm-eval or any command) on\n"
      << "this host, in Docker or on Slurm, and reports a verdict as its exit code.\n\n"
      << "subcommands:\n";
  for (const Subcommand& subcommand : kSubcommands) {
    out << "  " << std::left << std::setw(9) << subcommand.name << subcommand.description << "\n";
  }
  out << "\nexit codes: 0 PASSED, 1 FAILED, 2 bad input (nothing started), 3 ERROR,\n"
      << "  4 TIMEOUT, 5 HANG_DETECTED, 6 CANCELLED, 7 OUT_OF_MEMORY, 130 interrupted\n"
      << "'trtllm-run SUBCOMMAND --help' lists a subcommand's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (e.g. `| head`) must not kill trtllm-run while a job runs.
  ::signal(SIGPIPE, SIG_IGN);
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    PrintUsage(std::cout);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) {
    std::cout << "trtllm-run " << trtllm_run::Version() << " (plugin API "
              << TRTLLM_RUN_PLUGIN_API_VERSION << ")\n";
    return 0;
  }
  if (argc < 2) {
    PrintUsage(std::cerr);
    return trtllm_run::kExitBadInput;
  }
  for (const Subcommand& subcommand : kSubcommands) {
    if (std::strcmp(argv[1], subcommand.name) == 0) return subcommand.main(argc - 1, argv + 1);
  }
  if (argv[1][0] == '-') return trtllm_run::cli::RunMain(argc, argv);  // `run` is the default
  std::cerr << "trtllm-run: error: unknown subcommand '" << argv[1] << "'\n";
  PrintUsage(std::cerr);
  return trtllm_run::kExitBadInput;
}
