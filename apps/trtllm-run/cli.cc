#include "cli.h"

#include "trtllm_run/report.h"
#include "trtllm_run/result.h"
#include "trtllm_run/text.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

namespace trtllm_run::cli {

namespace {

// Exit code for a Status that stopped a command before anything started.
int ExitCodeForStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidInput:
    case StatusCode::kNotFound:
      return kExitBadInput;
    default:
      return kExitError;
  }
}

}  // namespace

int Fail(const std::string& subcommand, const Status& status) {
  // Messages quote input (files, flags): control bytes are shown escaped, never sent raw.
  std::string message = status.ToString();
  std::string shown;
  std::size_t start = 0;
  while (start <= message.size()) {
    std::size_t newline = message.find('\n', start);
    if (newline == std::string::npos) newline = message.size();
    shown += EscapeControl(std::string_view(message).substr(start, newline - start));
    if (newline < message.size()) shown += '\n';
    start = newline + 1;
  }
  std::cerr << "trtllm-run " << subcommand << ": error: " << shown << "\n";
  return ExitCodeForStatus(status);
}

Status CheckOutputFile(const std::string& path, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidInput(flag + " '" + EscapeControl(path) + "': " + why,
                                "give a file path in an existing, writable directory; it is "
                                "checked before the case runs, so a report is never lost");
  };
  if (path.empty()) return bad("the path is empty");
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (!S_ISREG(info.st_mode)) return bad("exists and is not a regular file");
    if (::access(path.c_str(), W_OK) != 0)
      return bad(std::string("cannot be written: ") + std::strerror(errno));
  }
  std::string parent = std::filesystem::path(path).parent_path().string();
  if (parent.empty()) parent = ".";
  if (::stat(parent.c_str(), &info) != 0) {
    return bad("its directory " + parent + " does not exist");
  }
  if (!S_ISDIR(info.st_mode)) return bad(parent + " is not a directory");
  if (::access(parent.c_str(), W_OK) != 0) {
    return bad("its directory " + parent + " is not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

int UsageError(const std::string& subcommand, const std::string& message) {
  std::cerr << "trtllm-run " << subcommand << ": error: " << message << "\n"
            << "  hint: see 'trtllm-run " << subcommand << " --help'\n";
  return kExitBadInput;
}

po::options_description PluginOptions() {
  po::options_description options("Plugins and site");
  options.add_options()("plugin-dir", po::value<std::vector<std::string>>()->composing(),
                        "also load plugins from DIR (repeatable; after the built-in directory and "
                        "$TRTLLM_RUN_PLUGIN_PATH)")(
      "clusters", po::value<std::string>(),
      "the cluster catalog (default: $TRTLLM_RUN_CLUSTERS, else "
      "$XDG_CONFIG_HOME/trtllm-run/clusters.yaml)");
  return options;
}

po::options_description CaseOptions() {
  po::options_description options("Case (the same names in snake_case work in --request files)");
  for (const RequestField& field : RequestFields()) {
    switch (field.type) {
      case FieldType::kBool:
        options.add_options()(field.flag.c_str(), po::value<std::string>()->implicit_value("true"),
                              field.help.c_str());
        break;
      case FieldType::kStringList:
        options.add_options()(field.flag.c_str(),
                              po::value<std::vector<std::string>>()->composing(),
                              field.help.c_str());
        break;
      default:
        options.add_options()(field.flag.c_str(), po::value<std::string>(), field.help.c_str());
    }
  }
  options.add_options()("request", po::value<std::string>(),
                        "read the case from a YAML or JSON file; flags override its values")(
      "password-file", po::value<std::string>(),
      "read the SSH password for the login node from FILE (else "
      "$TRTLLM_RUN_SLURM_PASSWORD); never stored or logged");
  return options;
}

Result<CaseRequest> RequestFromOptions(const po::variables_map& vm) {
  CaseRequest request;
  if (vm.count("request")) {
    TRTLLM_RUN_RETURN_IF_ERROR(LoadRequestFile(vm["request"].as<std::string>(), &request));
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
      TRTLLM_RUN_RETURN_IF_ERROR(
          SetRequestField(&from_flags, field.name, value, "--" + field.flag));
    }
  }
  MergeRequest(from_flags, &request);
  if (vm.count("password-file")) {
    const std::string path = vm["password-file"].as<std::string>();
    Result<std::string> password = ReadFile(path);
    if (!password.ok()) {
      return Status::InvalidInput("--password-file: " + password.status().message(),
                                  "give a readable file (mode 0600) holding only the password");
    }
    std::string secret = password.value();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    request.slurm_password = secret;  // reaches the executor in memory (ExecContext)
  }
  return request;
}

Result<std::unique_ptr<Runtime>> MakeRuntime(const po::variables_map& vm) {
  RuntimeOptions options;
  if (vm.count("plugin-dir")) {
    options.plugin_dirs = vm["plugin-dir"].as<std::vector<std::string>>();
  }
  if (vm.count("clusters")) options.catalog_path = vm["clusters"].as<std::string>();
  return Runtime::Create(options);
}

void PrintPluginProblems(const Registry& registry) {
  for (const PluginProblem& problem : registry.problems()) {
    std::cerr << "warning: " << problem.status.ToString() << "\n";
  }
}

RunOptions TerminalRunOptions(const po::variables_map& vm, CancellationToken* cancel,
                              int kill_grace_seconds) {
  RunOptions options;
  options.terminal = vm["json"].as<bool>() ? &std::cerr : &std::cout;
  options.progress = &std::cerr;
  options.cancel = cancel;
  options.kill_grace_seconds = kill_grace_seconds;
  return options;
}

int ReportResult(const std::string& subcommand, const po::variables_map& vm,
                 const RunResult& result) {
  std::cout.flush();
  std::cerr << "\n" << FormatSummary(result) << "\n";
  if (vm.count("junit")) {
    Status written = WriteJUnit(result, vm["junit"].as<std::string>());
    if (!written.ok()) {
      std::cerr << "trtllm-run " << subcommand << ": error: " << written.ToString() << "\n";
    }
  }
  if (vm["json"].as<bool>()) std::cout << ResultToJson(result) << std::flush;
  return ExitCodeFor(result);
}

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

}  // namespace trtllm_run::cli
