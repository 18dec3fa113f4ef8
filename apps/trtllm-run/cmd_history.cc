// `trtllm-run history`: what the history store (libcore history/) remembers of past runs:
// one test's or case's record, the flaky tests, durations for sharding, pruning.
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "history/history_query.h"
#include "history/history_store.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// ISO 8601 UTC of `days` days ago.
std::string DaysAgo(double days) {
  const std::time_t then =
      std::time(nullptr) - static_cast<std::time_t>(std::llround(days * 86400));
  std::tm tm{};
  gmtime_r(&then, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string Secs(std::optional<double> seconds) {
  if (!seconds) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(*seconds < 10 ? 2 : 1) << *seconds << " s";
  return out.str();
}

std::string Percent(double rate) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << rate * 100 << "%";
  return out.str();
}

void Str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void OptionalDouble(Writer& w, const char* key, std::optional<double> value) {
  w.Key(key);
  if (value) {
    w.Double(*value);
  } else {
    w.Null();
  }
}

int ShowTest(const std::string& name, history::HistoryStore& store, int last_n, bool json) {
  Result<std::vector<history::OutcomeRow>> rows = store.Outcomes(name, 0);
  if (!rows.ok()) return Fail("history", rows.status());
  if (rows->empty()) {
    return Fail("history", Status::NotFound("no test or case named '" + EscapeControl(name) +
                                                "' in the history " + store.location(),
                                            "a test is named by its pytest node id, a case by its "
                                            "cases-file name or its command; `trtllm-run history "
                                            "flaky` lists tests"));
  }
  const history::TestSummary summary = history::Summarize(name, rows.value(), last_n);
  if (json) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.SetIndent(' ', 2);
    w.StartObject();
    Str(w, "name", summary.name);
    Str(w, "store", store.location());
    w.Key("runs");
    w.Int64(summary.runs);
    w.Key("passed");
    w.Int64(summary.passed);
    w.Key("failed");
    w.Int64(summary.failed);
    w.Key("pass_rate");
    w.Double(summary.pass_rate);
    OptionalDouble(w, "p50_seconds", summary.p50_seconds);
    OptionalDouble(w, "p90_seconds", summary.p90_seconds);
    w.Key("last");
    w.StartArray();
    for (const history::OutcomeRow& row : summary.last) {
      w.StartObject();
      Str(w, "recorded_at", row.recorded_at);
      Str(w, "outcome", row.outcome);
      Str(w, "commit", row.commit);
      Str(w, "branch", row.branch);
      w.Key("attempt");
      w.Int(row.attempt);
      OptionalDouble(w, "duration_seconds", row.duration_seconds);
      Str(w, "signature", row.signature);
      Str(w, "stage", row.stage);
      w.Key("shard");
      w.Int(row.shard);
      Str(w, "work_dir", row.work_dir);
      w.EndObject();
    }
    w.EndArray();
    w.Key("signatures");
    w.StartArray();
    for (const auto& [signature, count] : summary.signatures) {
      w.StartObject();
      Str(w, "signature", signature);
      w.Key("count");
      w.Int64(count);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::cout << std::string(buffer.GetString(), buffer.GetSize()) << "\n";
    return kExitPassed;
  }
  std::cout << EscapeControl(summary.name) << ": " << summary.passed << " passed, "
            << summary.failed << " failed of " << summary.runs << " runs (pass rate "
            << Percent(summary.pass_rate) << ")\n"
            << "duration: p50 " << Secs(summary.p50_seconds) << ", p90 "
            << Secs(summary.p90_seconds) << "\n"
            << "last " << summary.last.size() << ":\n";
  for (const history::OutcomeRow& row : summary.last) {
    std::cout << "  " << row.recorded_at << "  " << std::left << std::setw(13)
              << EscapeControl(row.outcome) << " "
              << (row.commit.empty() ? "-" : EscapeControl(row.commit.substr(0, 10)))
              << (row.branch.empty() ? "" : " (" + EscapeControl(row.branch) + ")") << "  "
              << Secs(row.duration_seconds)
              << (row.attempt ? "  rerun " + std::to_string(row.attempt) : "")
              << (row.signature.empty() ? "" : "  " + EscapeControl(row.signature)) << "\n";
  }
  if (!summary.signatures.empty()) {
    std::cout << "failure signatures:\n";
    for (const auto& [signature, count] : summary.signatures) {
      std::cout << "  " << std::right << std::setw(5) << count << "  " << EscapeControl(signature)
                << "\n";
    }
  }
  return kExitPassed;
}

int ShowFlaky(history::HistoryStore& store, std::optional<double> days, bool json) {
  const std::string since = days ? DaysAgo(*days) : "";
  Result<std::vector<history::CommitCounts>> counts = store.CountsByCommit(since);
  if (!counts.ok()) return Fail("history", counts.status());
  const std::vector<history::FlakyTest> flaky = history::FindFlaky(counts.value());
  if (json) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.SetIndent(' ', 2);
    w.StartObject();
    Str(w, "store", store.location());
    Str(w, "since", since);
    w.Key("flaky");
    w.StartArray();
    for (const history::FlakyTest& test : flaky) {
      w.StartObject();
      Str(w, "node_id", test.node_id);
      w.Key("flake_rate");
      w.Double(test.flake_rate);
      w.Key("passed");
      w.Int64(test.passed);
      w.Key("failed");
      w.Int64(test.failed);
      w.Key("passed_on_rerun");
      w.Int64(test.passed_on_rerun);
      w.Key("mixed_commits");
      w.Int64(test.mixed_commits);
      Str(w, "last_at", test.last_at);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::cout << std::string(buffer.GetString(), buffer.GetSize()) << "\n";
    return kExitPassed;
  }
  std::cout << flaky.size() << " flaky test" << (flaky.size() == 1 ? "" : "s")
            << (since.empty() ? "" : " since " + since) << " in " << EscapeControl(store.location())
            << " (both outcomes on one commit, or a failure and a rerun's pass)\n";
  if (flaky.empty()) return kExitPassed;
  std::cout << "  flake rate  passed  failed  rerun passes  mixed commits  test\n";
  for (const history::FlakyTest& test : flaky) {
    std::cout << "  " << std::left << std::setw(10) << Percent(test.flake_rate) << "  "
              << std::setw(6) << test.passed << "  " << std::setw(6) << test.failed << "  "
              << std::setw(12) << test.passed_on_rerun << "  " << std::setw(13)
              << test.mixed_commits << "  " << EscapeControl(test.node_id) << "\n";
  }
  return kExitPassed;
}

// A whole number of days >= 1 given to `flag`, or the usage error's exit code.
std::optional<int> DaysFlag(const po::variables_map& vm, const char* flag, double* days) {
  const std::string text = vm[flag].as<std::string>();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0) || value > 36500) {
    return UsageError("history", std::string("--") + flag + " '" + EscapeControl(text) +
                                     "' is not a number of days (> 0, e.g. 30 or 0.5)");
  }
  *days = value;
  return std::nullopt;
}

}  // namespace

int HistoryMain(int argc, char** argv) {
  po::options_description options("History queries");
  options.add_options()("json", po::bool_switch(), "print the answer as JSON on stdout")(
      "last", po::value<int>()->default_value(10)->value_name("N"),
      "TEST_OR_CASE: how many of the newest outcomes to list")(
      "days", po::value<std::string>()->value_name("N"),
      "flaky: only the outcomes of the last N days (default: all)")(
      "older-than", po::value<std::string>()->value_name("DAYS"),
      "prune: delete what was recorded more than DAYS days ago (default 90)");
  po::options_description visible;
  visible.add(options).add(HistoryOptions());
  po::variables_map vm;
  CommandUsage usage;
  usage.positional = "TEST_OR_CASE | flaky | export-durations FILE | prune";
  usage.max_positionals = 2;
  usage.about =
      "What the history remembers of past runs (every verdict of run, run --cases and stage, "
      "and every pytest outcome, is recorded at the verdict). `history TEST_OR_CASE`: pass "
      "rate, the last outcomes with dates and commits, duration p50/p90, failure signatures. "
      "`history flaky [--days N]`: tests with both outcomes on one commit, or that failed and "
      "passed "
      "on a rerun, highest flake rate first. `history export-durations FILE`: each test's mean "
      "duration as pytest-split's .test_durations JSON (what `stage --durations` takes). "
      "`history prune [--older-than DAYS]`: delete old records. Exit 0, 2 on bad input or an "
      "unknown name, 3 when the store cannot be read.";
  if (std::optional<int> done = Parse("history", argc, argv, visible, &vm, usage)) return *done;
  const std::vector<std::string> args = Positionals(vm);
  const std::string& what = args.front();
  const bool json = vm["json"].as<bool>();
  const bool known_verb = what == "flaky" || what == "export-durations" || what == "prune";
  if ((what == "flaky" || what == "prune") && args.size() > 1) {
    return UsageError(
        "history", "'" + what + "' takes no argument; unexpected '" + EscapeControl(args[1]) + "'");
  }
  if (!known_verb && args.size() > 1) {
    return UsageError("history",
                      "give one TEST_OR_CASE; unexpected '" + EscapeControl(args[1]) + "'",
                      "quote a node id with spaces");
  }
  if (what == "export-durations" && args.size() != 2) {
    return UsageError("history", "export-durations takes the FILE to write",
                      "e.g. trtllm-run history export-durations .test_durations");
  }
  if (vm.count("days") && what != "flaky") return UsageError("history", "--days goes with flaky");
  if (vm.count("older-than") && what != "prune") {
    return UsageError("history", "--older-than goes with prune");
  }
  if (!vm["last"].defaulted() && known_verb) {
    return UsageError("history", "--last goes with TEST_OR_CASE");
  }
  if (vm["last"].as<int>() < 1) return UsageError("history", "--last must be >= 1");
  std::optional<double> days;
  if (vm.count("days")) {
    double value = 0;
    if (std::optional<int> bad = DaysFlag(vm, "days", &value)) return *bad;
    days = value;
  }
  double older_than = 90;
  if (vm.count("older-than")) {
    if (std::optional<int> bad = DaysFlag(vm, "older-than", &older_than)) return *bad;
  }
  if (what == "export-durations") {
    Status writable = CheckOutputFile(args[1], "export-durations FILE");
    if (!writable.ok()) return Fail("history", writable);
  }

  std::string origin;
  Result<std::string> path = HistoryPathFromFlags(vm, &origin);
  if (!path.ok()) return UsageError("history", path.status().message(), path.status().hint());
  if (path->empty()) {
    return Fail("history", Status::InvalidInput("the history is off (" + origin + ")",
                                                "give --history STORE to read one"));
  }
  std::error_code error;
  if (!history::IsPostgresUrl(*path) && !std::filesystem::exists(path.value(), error)) {
    return Fail("history",
                Status::NotFound("no history store at " + *path + " (" + origin + ")",
                                 "runs are recorded there once one ends; --history STORE "
                                 "reads another"));
  }
  Result<std::unique_ptr<history::HistoryStore>> store = history::OpenHistoryStore(path.value());
  if (!store.ok()) return Fail("history", store.status());

  if (what == "flaky") return ShowFlaky(*store.value(), days, json);
  if (what == "export-durations") {
    Result<std::map<std::string, double>> durations = store.value()->MeanDurations();
    if (!durations.ok()) return Fail("history", durations.status());
    Status written = WriteFileAtomic(args[1], history::TestDurationsJson(durations.value()));
    if (!written.ok()) return Fail("history", written);
    std::cerr << "trtllm-run history: wrote the durations of " << durations->size() << " test"
              << (durations->size() == 1 ? "" : "s") << " to " << EscapeControl(args[1]) << "\n";
    return kExitPassed;
  }
  if (what == "prune") {
    const std::string before = DaysAgo(older_than);
    Result<std::int64_t> removed = store.value()->Prune(before);
    if (!removed.ok()) return Fail("history", removed.status());
    if (json) {
      std::cout << "{\"removed_cases\": " << removed.value() << ", \"before\": \"" << before
                << "\"}\n";
    } else {
      std::cout << "pruned " << removed.value() << " case" << (removed.value() == 1 ? "" : "s")
                << " recorded before " << before << " from "
                << EscapeControl(store.value()->location()) << "\n";
    }
    return kExitPassed;
  }
  return ShowTest(what, *store.value(), vm["last"].as<int>(), json);
}

}  // namespace trtllm_run::cli
