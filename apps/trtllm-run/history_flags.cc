// --history STORE / --no-history: where a run's verdicts are recorded (cli.h).
#include <iostream>

#include "cli.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "runtime/config_trust.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/user_config.h"

namespace trtllm_run::cli {
namespace {

// The warning of a run not recorded: the store's problem and its fix, the verdict untouched.
void Warn(const std::string& subcommand, const Status& status) {
  std::cerr << "trtllm-run " << subcommand
            << ": warning: not recorded in the history: " << EscapeControl(status.message())
            << "\n";
  if (!status.hint().empty()) std::cerr << "  hint: " << EscapeControl(status.hint()) << "\n";
}

}  // namespace

po::options_description HistoryOptions() {
  po::options_description options("History");
  options.add_options()(
      "history", po::value<std::string>()->value_name("STORE"),
      "the history runs are recorded in and `history` reads: a SQLite file on a local disk, or "
      "a team's PostgreSQL database as postgresql://USER@HOST[:PORT]/DATABASE (no password in "
      "it: libpq reads ~/.pgpass, $PGPASSFILE or $PGPASSWORD) (default: the user config's "
      "`history:`, else $XDG_DATA_HOME/trtllm-run/history.sqlite, i.e. "
      "~/.local/share/trtllm-run/history.sqlite)")(
      "no-history", po::bool_switch(),
      "record nothing in the history (the user config's `history: off` does the same)");
  return options;
}

Result<std::string> HistoryPathFromFlags(const po::variables_map& vm, std::string* origin) {
  auto from = [&](const std::string& where) {
    if (origin != nullptr) *origin = where;
  };
  const bool off = vm.count("no-history") && vm["no-history"].as<bool>();
  if (vm.count("history")) {
    if (off) {
      return Status::InvalidInput("give --history STORE or --no-history, not both");
    }
    const std::string path = vm["history"].as<std::string>();
    if (path.empty()) {
      return Status::InvalidInput("--history '' names no file",
                                  "give a file on a local disk, or --no-history");
    }
    from("--history");
    if (history::IsPostgresUrl(path)) TRTLLM_RUN_RETURN_IF_ERROR(history::CheckPostgresUrl(path));
    return path;
  }
  if (off) {
    from("--no-history");
    return std::string();
  }
  Result<std::optional<ConfigFile>> config = LoadConfigFile(UserConfigPath(), ConfigSource::kUser);
  if (config.ok() && config.value() && config.value()->history) {
    const ConfigValue& value = *config.value()->history;
    from(value.origin);
    if (value.text == "off" || value.text == "false" || value.text == "no") return std::string();
    std::string path = value.text;
    if (history::IsPostgresUrl(path)) {
      Status url = history::CheckPostgresUrl(path);
      if (!url.ok()) return Status::InvalidInput(value.origin + ": " + url.message(), url.hint());
      return path;
    }
    const char* home = std::getenv("HOME");
    if (path.rfind("~/", 0) == 0 && home != nullptr) path = home + path.substr(1);
    return path;
  }
  from("the default");
  return history::DefaultHistoryPath();
}

std::unique_ptr<history::HistoryStore> OpenHistoryForRecording(const std::string& subcommand,
                                                               const po::variables_map& vm) {
  Result<std::string> path = HistoryPathFromFlags(vm, nullptr);
  if (!path.ok() || path->empty()) return nullptr;  // flags were checked before the run
  Result<std::unique_ptr<history::HistoryStore>> store = history::OpenHistoryStore(path.value());
  if (!store.ok()) {
    Warn(subcommand, store.status());
    return nullptr;
  }
  return std::move(store.value());
}

HistoryOpening::HistoryOpening(std::string subcommand, const po::variables_map& vm)
    : subcommand_(std::move(subcommand)) {
  Result<std::string> path = HistoryPathFromFlags(vm, nullptr);
  if (!path.ok() || path->empty()) return;  // flags were checked before the run
  opener_ = std::thread([this, path = path.value()] {
    Result<std::unique_ptr<history::HistoryStore>> store = history::OpenHistoryStore(path);
    if (store.ok()) {
      store_ = std::move(store.value());
    } else {
      open_failure_ = store.status();
    }
  });
}

HistoryOpening::~HistoryOpening() { Close(); }

history::HistoryStore* HistoryOpening::Get() {
  if (opener_.joinable()) {
    opener_.join();
    if (!open_failure_.ok()) Warn(subcommand_, open_failure_);
  }
  return store_.get();
}

void HistoryOpening::Close() {
  Get();  // waits; a store that could not be opened is still warned about
  store_.reset();
}

void RecordInHistory(const std::string& subcommand, history::HistoryStore* store,
                     const history::CaseRecord& record) {
  if (store == nullptr) return;
  Status recorded = store->Record(record);
  if (!recorded.ok()) {
    Warn(subcommand, recorded);
  }
}

}  // namespace trtllm_run::cli
