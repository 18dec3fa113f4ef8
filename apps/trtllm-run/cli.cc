#include "cli.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "model/edit_distance.h"
#include "trtllm_run/report.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/text.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
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

bool json_errors = false;
std::string command_description;  // the running subcommand's line of `trtllm-run --help`
std::function<void(const CommandDoc&)> describe_hook;

// {"error": {...}} on stdout, for callers that read --json output.
void PrintJsonError(const std::string& subcommand, int exit_code, const std::string& message,
                    const std::string& hint) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  w.Key("error");
  w.StartObject();
  str("subcommand", subcommand);
  w.Key("exit_code");
  w.Int(exit_code);
  str("message", message);
  str("hint", hint);
  w.EndObject();
  w.EndObject();
  std::cout << buffer.GetString() << "\n" << std::flush;
}

// Short flags where sbatch users expect them (sbatch -p, -A, -t, -J).
const std::map<std::string, std::string>& ShortFlags() {
  static const std::map<std::string, std::string> shorts = {
      {"partition", "p"}, {"account", "A"}, {"time-limit", "t"}, {"model-name", "J"}};
  return shorts;
}

// The value names the help, the input checks and the completion read (Parse).
const std::map<std::string, std::string>& ValueNames() {
  static const std::map<std::string, std::string> names = {{"custom-script", "FILE"},
                                                           {"perf-config-yaml", "FILE"},
                                                           {"slurm-env-file", "FILE"},
                                                           {"ssh-config-file", "FILE"},
                                                           {"identity", "FILE"},
                                                           {"checkpoint-path", "DIR"},
                                                           {"models-path", "DIR"},
                                                           {"repo-root", "DIR"},
                                                           {"time-limit", "DURATION"},
                                                           {"alloc-time-limit", "DURATION"},
                                                           {"monitor-timeout", "DURATION"},
                                                           {"max-pending", "DURATION"},
                                                           {"silence-timeout", "DURATION"},
                                                           {"partition", "NAME"},
                                                           {"account", "NAME"},
                                                           {"scenario", "SCENARIO"},
                                                           {"container-runtime", "RUNTIME"},
                                                           {"slurm-cluster", "CLUSTER"},
                                                           {"container-image", "IMAGE"},
                                                           {"test-cmd", "COMMAND"},
                                                           {"bench-cmd", "COMMAND"},
                                                           {"eval-cmd", "COMMAND"},
                                                           {"custom-cmd", "COMMAND"},
                                                           {"custom-env", "ENV"},
                                                           {"model-name", "NAME"},
                                                           {"device-type", "GPU"},
                                                           {"llm-models-root", "CONTAINER_DIR"},
                                                           {"docker-pull", "POLICY"},
                                                           {"docker-memory", "SIZE"},
                                                           {"remote-cwd", "REMOTE_DIR"},
                                                           {"remote-repo-path", "REMOTE_DIR"},
                                                           {"repo-url", "URL"},
                                                           {"repo-branch", "BRANCH"},
                                                           {"extra-files", "LOCAL_FILE"},
                                                           {"ssh-host", "[USER@]HOST"},
                                                           {"ssh-option", "KEY=VALUE"},
                                                           {"user-name", "NAME"},
                                                           {"slurm-user", "NAME"}};
  return names;
}

// The request fields of the SSH connection: one group, the same for env, plan and run.
const std::set<std::string>& SshFieldNames() {
  static const std::set<std::string> names = {"slurm_cluster", "ssh_host",  "ssh_config_file",
                                              "ssh_port",      "identity",  "ssh_option",
                                              "user_name",     "slurm_user"};
  return names;
}

void AddFieldOption(const RequestField& field, po::options_description* options) {
  std::string names = field.flag;
  if (auto s = ShortFlags().find(field.flag); s != ShortFlags().end()) names += "," + s->second;
  std::string value_name = "ARG";
  if (auto v = ValueNames().find(field.flag); v != ValueNames().end()) value_name = v->second;
  switch (field.type) {
    case FieldType::kBool:
      options->add_options()(names.c_str(),
                             po::value<std::string>()->implicit_value("true")->value_name("BOOL"),
                             field.help.c_str());
      break;
    case FieldType::kStringList:
      options->add_options()(
          names.c_str(), po::value<std::vector<std::string>>()->composing()->value_name(value_name),
          field.help.c_str());
      break;
    case FieldType::kInt:
      options->add_options()(names.c_str(), po::value<std::string>()->value_name("N"),
                             field.help.c_str());
      break;
    default:
      options->add_options()(names.c_str(), po::value<std::string>()->value_name(value_name),
                             field.help.c_str());
  }
}

// The option names of `options`, with dashes, for did-you-mean.
std::vector<std::string> FlagNames(const po::options_description& options) {
  std::vector<std::string> names = {"--help"};
  for (const auto& option : options.options()) names.push_back("--" + option->long_name());
  return names;
}

// FILE flags whose readers already refuse a missing or unreadable file with exit 2,
// naming the flag's file in their own words (--durations also takes the word `history`).
const std::set<std::string>& FilesTheirReadersCheck() {
  static const std::set<std::string> flags = {"clusters", "perf-config-yaml", "custom-script",
                                              "durations"};
  return flags;
}

// kInvalidInput unless every FILE flag given names an existing, readable file.
Status CheckInputFiles(const po::options_description& options, const po::variables_map& vm) {
  for (const auto& option : options.options()) {
    const std::string flag = option->long_name();
    if (!vm.count(flag) || option->semantic()->max_tokens() == 0) continue;
    if (option->semantic()->name().rfind("FILE", 0) != 0) continue;
    if (FilesTheirReadersCheck().count(flag)) continue;
    std::vector<std::string> paths;
    if (const auto* one = boost::any_cast<std::string>(&vm[flag].value())) paths.push_back(*one);
    if (const auto* many = boost::any_cast<std::vector<std::string>>(&vm[flag].value())) {
      paths = *many;
    }
    for (const std::string& path : paths) {
      const std::string cannot_read = "--" + flag + ": cannot read " + EscapeControl(path) + ": ";
      const std::string hint = "give the path of an existing, readable file";
      struct stat info {};
      if (::stat(path.c_str(), &info) != 0) {
        return Status::InvalidInput(cannot_read + std::strerror(errno), hint);
      }
      if (S_ISDIR(info.st_mode)) {
        return Status::InvalidInput(cannot_read + std::strerror(EISDIR), hint);
      }
      if (::access(path.c_str(), R_OK) != 0) {
        return Status::InvalidInput(cannot_read + std::strerror(errno), hint);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void SetJsonErrors(bool on) { json_errors = on; }

void SetCommandDescription(const std::string& description) { command_description = description; }

void SetDescribeHook(std::function<void(const CommandDoc&)> hook) {
  describe_hook = std::move(hook);
}

po::typed_value<std::string>* DurationValue(const std::string& default_value) {
  po::typed_value<std::string>* value = po::value<std::string>()->value_name("DURATION");
  if (!default_value.empty()) value->default_value(default_value);
  return value;
}

Result<double> DurationFlag(const po::variables_map& vm, const std::string& flag, bool fractions) {
  const std::string text = vm[flag].as<std::string>();
  const std::string label = "--" + flag;
  std::string number = text;
  if (!number.empty() && number.back() == 's') number.pop_back();
  // A number of seconds, 0 included (ParseDurationSeconds refuses a zero duration).
  if (!number.empty() && number.size() <= 9 &&
      number.find_first_not_of("0123456789") == std::string::npos) {
    return static_cast<double>(std::stol(number));
  }
  if (fractions && number.find('.') != std::string::npos) {
    char* end = nullptr;
    double seconds = std::strtod(number.c_str(), &end);
    if (end && *end == '\0' && seconds >= 0 &&
        number.find_first_not_of("0123456789.") == std::string::npos) {
      return seconds;
    }
  }
  Result<int> seconds = ParseDurationSeconds(text, label);
  if (!seconds.ok()) {
    return Status::InvalidInput(seconds.status().message(),
                                std::string("durations: 2h, 90m, 30s, HH:MM:SS or seconds") +
                                    (fractions ? " (fractions allowed: 0.25)" : ""));
  }
  return static_cast<double>(seconds.value());
}

Result<int> KillGraceFlag(const po::variables_map& vm) {
  Result<double> seconds = DurationFlag(vm, "kill-grace");
  if (!seconds.ok()) return seconds.status();
  return static_cast<int>(seconds.value());
}

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
  std::cerr << "trtllm-run" << (subcommand.empty() ? "" : " " + subcommand) << ": error: " << shown
            << "\n";
  if (json_errors) {
    PrintJsonError(subcommand, ExitCodeForStatus(status), status.message(), status.hint());
  }
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

int UsageError(const std::string& subcommand, const std::string& message, const std::string& hint) {
  const std::string see = "see 'trtllm-run " + subcommand + " --help'";
  const std::string full_hint = hint.empty() ? see : hint + " (" + see + ")";
  std::cerr << "trtllm-run " << subcommand << ": error: " << EscapeControl(message) << "\n"
            << "  hint: " << EscapeControl(full_hint) << "\n";
  if (json_errors) PrintJsonError(subcommand, kExitBadInput, message, full_hint);
  return kExitBadInput;
}

po::options_description PluginOptions() {
  po::options_description options("Plugins and site");
  options.add_options()(
      "plugin-dir", po::value<std::vector<std::string>>()->composing()->value_name("DIR"),
      "also load plugins from DIR (repeatable; after the built-in directory and "
      "$TRTLLM_RUN_PLUGIN_PATH)")("clusters", po::value<std::string>()->value_name("FILE"),
                                  "the cluster catalog (default: $TRTLLM_RUN_CLUSTERS, else "
                                  "$XDG_CONFIG_HOME/trtllm-run/clusters.yaml)");
  return options;
}

po::options_description SshFlagOptions() {
  po::options_description options("Remote login node (SSH; the same flags for env, plan, run)");
  for (const RequestField& field : RequestFields()) {
    if (SshFieldNames().count(field.name)) AddFieldOption(field, &options);
  }
  options.add_options()("password-file", po::value<std::string>()->value_name("FILE"),
                        "read the SSH password for the login node from FILE (else "
                        "$TRTLLM_RUN_SLURM_PASSWORD); never stored or logged");
  return options;
}

po::options_description CaseOptions() {
  po::options_description options("Case (the same names in snake_case work in --request files)");
  for (const RequestField& field : RequestFields()) {
    if (!SshFieldNames().count(field.name)) AddFieldOption(field, &options);
  }
  options.add_options()("executor-option",
                        po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
                        "KEY=VALUE input of the chosen executor (repeatable; request files: "
                        "executor_options mapping); the executor says which keys it takes")(
      "request", po::value<std::string>()->value_name("FILE"),
      "read the case from a YAML or JSON file; flags override its values");
  options.add(SshFlagOptions());
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
  if (vm.count("executor-option")) {
    for (const std::string& value : vm["executor-option"].as<std::vector<std::string>>()) {
      TRTLLM_RUN_RETURN_IF_ERROR(SetExecutorOption(&from_flags, value, "--executor-option"));
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
                         const po::options_description& visible, po::variables_map* vm,
                         const CommandUsage& usage) {
  auto describe = [&] {
    CommandDoc doc;
    doc.name = subcommand;
    doc.positional = usage.positional;
    doc.about = usage.about.empty() ? command_description : usage.about;
    doc.groups = DescribeOptions(visible);
    return doc;
  };
  if (describe_hook) {
    describe_hook(describe());
    return 0;
  }
  po::options_description all;
  all.add(visible).add_options()("help,h", "show this help");
  po::options_description positional_holder;
  positional_holder.add_options()("positional", po::value<std::vector<std::string>>());
  all.add(positional_holder);
  po::positional_options_description positional;
  positional.add("positional", -1);
  try {
    // No prefix guessing: `--scen` is not taken as --scenario (an abbreviation that a
    // later flag makes ambiguous would change meaning); it gets a did-you-mean instead.
    const int style =
        po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(
        po::command_line_parser(argc, argv).options(all).positional(positional).style(style).run(),
        *vm);
    po::notify(*vm);
  } catch (const po::unknown_option& e) {
    std::string given = e.get_option_name();
    const std::string flag = given.substr(0, given.find('='));
    std::string closest = ClosestName(flag, FlagNames(visible));
    if (flag.rfind("--", 0) == 0 && flag.size() > 2) {  // an abbreviation: what it starts
      std::string starting;
      for (const std::string& name : FlagNames(visible)) {
        if (name.rfind(flag, 0) == 0) starting += (starting.empty() ? "" : "' or '") + name;
      }
      if (!starting.empty()) closest = starting;
    }
    return UsageError(subcommand, "unknown option '" + given + "'",
                      closest.empty() ? "" : "did you mean '" + closest + "'?");
  } catch (const po::error& e) {
    return UsageError(subcommand, e.what());
  }
  if (vm->count("help")) {
    PrintCommandHelp(std::cout, describe(), HelpWidth());
    return 0;
  }
  std::vector<std::string> arguments;
  if (vm->count("positional")) arguments = (*vm)["positional"].as<std::vector<std::string>>();
  if (usage.positional.empty() && !arguments.empty()) {
    return UsageError(subcommand, "unexpected argument '" + arguments[0] + "'",
                      "commands are given with --custom-cmd, --test-cmd, ...");
  }
  if (!usage.positional.empty()) {
    if (arguments.empty()) return UsageError(subcommand, "give " + usage.positional);
    if (arguments.size() > static_cast<std::size_t>(usage.max_positionals)) {
      return UsageError(subcommand, "one " + usage.positional + " only; unexpected '" +
                                        arguments[static_cast<std::size_t>(usage.max_positionals)] +
                                        "'");
    }
  }
  Status files = CheckInputFiles(visible, *vm);
  if (!files.ok()) return Fail(subcommand, files);
  return std::nullopt;
}

std::string Positional(const po::variables_map& vm) {
  return vm["positional"].as<std::vector<std::string>>().front();
}

std::vector<std::string> Positionals(const po::variables_map& vm) {
  if (!vm.count("positional")) return {};
  return vm["positional"].as<std::vector<std::string>>();
}

}  // namespace trtllm_run::cli
