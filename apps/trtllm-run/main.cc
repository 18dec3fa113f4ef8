// trtllm-run: parses options, builds the runtime, dispatches a subcommand, prints errors
// and maps them to exit codes. Everything else lives in libcore and the plugins.
#include <signal.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "trtllm_run/request.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/version.h"

namespace po = boost::program_options;
using namespace trtllm_run;

namespace {

// Exit code for a Status that stopped the run before anything started.
int ExitCodeForStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidInput:
    case StatusCode::kNotFound:
      return kExitBadInput;
    default:
      return kExitError;
  }
}

int Fail(const std::string& subcommand, const Status& status) {
  std::cerr << "trtllm-run " << subcommand << ": error: " << status.ToString() << "\n";
  return ExitCodeForStatus(status);
}

int UsageError(const std::string& subcommand, const std::string& message) {
  std::cerr << "trtllm-run " << subcommand << ": error: " << message << "\n"
            << "  hint: see 'trtllm-run " << subcommand << " --help'\n";
  return kExitBadInput;
}

// Options every subcommand that loads plugins accepts.
po::options_description PluginOptions() {
  po::options_description options("Plugins");
  options.add_options()("plugin-dir", po::value<std::vector<std::string>>()->composing(),
                        "also load plugins from DIR (repeatable; after the built-in directory and "
                        "$TRTLLM_RUN_PLUGIN_PATH)");
  return options;
}

Result<std::unique_ptr<Runtime>> MakeRuntime(const po::variables_map& vm) {
  RuntimeOptions options;
  if (vm.count("plugin-dir")) options.plugin_dirs = vm["plugin-dir"].as<std::vector<std::string>>();
  return Runtime::Create(options);
}

void PrintPluginProblems(const Registry& registry) {
  for (const PluginProblem& problem : registry.problems()) {
    std::cerr << "warning: " << problem.status.ToString() << "\n";
  }
}

// Parses argv into `vm`; returns an exit code when parsing ended the command.
std::optional<int> Parse(const std::string& subcommand, int argc, char** argv,
                         const po::options_description& visible, po::variables_map* vm) {
  po::options_description all;
  all.add(visible).add_options()("help,h", "show this help");
  po::options_description positional_holder;
  positional_holder.add_options()("unexpected", po::value<std::vector<std::string>>());
  all.add(positional_holder);
  po::positional_options_description positional;
  positional.add("unexpected", -1);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return UsageError(subcommand, e.what());
  }
  if (vm->count("unexpected")) {
    return UsageError(subcommand, "unexpected argument '" +
                                      (*vm)["unexpected"].as<std::vector<std::string>>()[0] +
                                      "' (commands are given with --custom-cmd, --test-cmd, ...)");
  }
  if (vm->count("help")) {
    std::cout << "usage: trtllm-run " << subcommand << " [options]\n\n" << visible << "\n";
    return 0;
  }
  return std::nullopt;
}

int RunMain(int argc, char** argv) {
  po::options_description case_options(
      "Case (the same names in snake_case work in --request files)");
  for (const RequestField& field : RequestFields()) {
    switch (field.type) {
      case FieldType::kBool:
        case_options.add_options()(field.flag.c_str(),
                                   po::value<std::string>()->implicit_value("true"),
                                   field.help.c_str());
        break;
      case FieldType::kStringList:
        case_options.add_options()(field.flag.c_str(),
                                   po::value<std::vector<std::string>>()->composing(),
                                   field.help.c_str());
        break;
      default:
        case_options.add_options()(field.flag.c_str(), po::value<std::string>(),
                                   field.help.c_str());
    }
  }
  po::options_description run_options("Run");
  run_options.add_options()("request", po::value<std::string>(),
                            "read the case from a YAML or JSON file; flags override its values")(
      "kill-grace", po::value<int>()->default_value(30),
      "seconds between SIGTERM and SIGKILL when a job is stopped");
  po::options_description visible;
  visible.add(case_options).add(run_options).add(PluginOptions());

  po::variables_map vm;
  if (std::optional<int> done = Parse("run", argc, argv, visible, &vm)) return *done;

  CaseRequest request;
  if (vm.count("request")) {
    Status loaded = LoadRequestFile(vm["request"].as<std::string>(), &request);
    if (!loaded.ok()) return Fail("run", loaded);
  }
  CaseRequest from_flags;
  for (const RequestField& field : RequestFields()) {
    if (!vm.count(field.flag)) continue;
    std::vector<std::string> values;
    if (field.type == FieldType::kStringList) {
      values = vm[field.flag].as<std::vector<std::string>>();
    } else {
      values.push_back(vm[field.flag].as<std::string>());
    }
    for (const std::string& value : values) {
      Status set = SetRequestField(&from_flags, field.name, value, "--" + field.flag);
      if (!set.ok()) return Fail("run", set);
    }
  }
  MergeRequest(from_flags, &request);
  if (vm["kill-grace"].as<int>() < 0) {
    return UsageError(
        "run", "--kill-grace must be >= 0, got " + std::to_string(vm["kill-grace"].as<int>()));
  }

  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("run", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  RunOptions options;
  options.terminal = &std::cout;
  options.progress = &std::cerr;
  options.cancel = &cancel;
  options.kill_grace_seconds = vm["kill-grace"].as<int>();
  Result<RunResult> result = runtime.value()->Run(request, options);
  if (!result.ok()) return Fail("run", result.status());
  std::cout.flush();
  std::cerr << "\n" << FormatSummary(result.value()) << "\n";
  return ExitCodeFor(result.value());
}

int PluginsMain(int argc, char** argv) {
  po::options_description visible;
  visible.add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("plugins", argc, argv, visible, &vm)) return *done;
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plugins", runtime.status());
  const Registry& registry = runtime.value()->registry();
  std::vector<PluginInfo> plugins = registry.plugins();
  size_t name_width = 4, version_width = 7;
  for (const PluginInfo& plugin : plugins) {
    name_width = std::max(name_width, plugin.name.size());
    version_width = std::max(version_width, plugin.version.size());
  }
  std::cout << std::left << std::setw(9) << "KIND"
            << "  " << std::setw(name_width) << "NAME"
            << "  " << std::setw(version_width) << "VERSION"
            << "  FILE\n";
  for (const PluginInfo& plugin : plugins) {
    std::cout << std::setw(9) << PluginKindName(plugin.kind) << "  " << std::setw(name_width)
              << plugin.name << "  " << std::setw(version_width) << plugin.version << "  "
              << plugin.path << "\n";
  }
  PrintPluginProblems(registry);
  return 0;
}

struct Subcommand {
  const char* name;
  const char* description;
  int (*main)(int argc, char** argv);
};

const Subcommand kSubcommands[] = {
    {"run", "run one case and report its verdict (the default subcommand)", RunMain},
    {"plugins", "list the workflow and executor plugins found, and any that failed to load",
     PluginsMain},
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
    std::cout << "trtllm-run " << Version() << " (plugin API " << TRTLLM_RUN_PLUGIN_API_VERSION
              << ")\n";
    return 0;
  }
  if (argc < 2) {
    PrintUsage(std::cerr);
    return kExitBadInput;
  }
  for (const Subcommand& subcommand : kSubcommands) {
    if (std::strcmp(argv[1], subcommand.name) == 0) return subcommand.main(argc - 1, argv + 1);
  }
  if (argv[1][0] == '-') return RunMain(argc, argv);  // `run` is the default subcommand
  std::cerr << "trtllm-run: error: unknown subcommand '" << argv[1] << "'\n";
  PrintUsage(std::cerr);
  return kExitBadInput;
}
