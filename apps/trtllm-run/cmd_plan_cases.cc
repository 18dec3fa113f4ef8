// `trtllm-run plan --cases FILE`: every case planned, nothing written or submitted. The
// table fits the terminal (long names shortened with "..."), each case's warnings and
// notes follow it, as a single `plan` shows them; --json prints every case's plan whole.
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

// The width to fit: the terminal's when stdout is one, else $COLUMNS, else 120.
int OutputWidth() {
  winsize size{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col > 0) {
    return size.ws_col;
  }
  if (const char* columns = std::getenv("COLUMNS")) {
    if (std::optional<long long> n = ParseInteger(columns, 20, 10000)) return static_cast<int>(*n);
  }
  return 120;
}

// `text` in at most `width` characters: the start and the end kept (ids differ in their
// [parameters]), "..." between them.
std::string Fit(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  if (width <= 3) return text.substr(0, width);
  const std::size_t keep = width - 3;
  const std::size_t head = keep / 2;
  return text.substr(0, head) + "..." + text.substr(text.size() - (keep - head));
}

// 5400 -> "1h30m", 3900 -> "1h5m", 90 -> "90s", 600 -> "10m".
std::string ShortDuration(int seconds) {
  if (seconds <= 0) return "none";
  if (seconds % 60 != 0 || seconds < 120) return std::to_string(seconds) + "s";
  const int minutes = seconds / 60;
  if (minutes < 60) return std::to_string(minutes) + "m";
  return std::to_string(minutes / 60) + "h" +
         (minutes % 60 ? std::to_string(minutes % 60) + "m" : "");
}

bool IsWarning(const std::string& note) { return note.rfind("warning", 0) == 0; }

// The case's notes as a single `plan` lists them: its own (a test-db block), then the
// workflow's and routing's; warnings first.
std::vector<std::string> CaseNotes(const CaseEntry& entry, const PlannedCase& plan) {
  std::vector<std::string> notes = entry.notes;
  notes.insert(notes.end(), plan.notes.begin(), plan.notes.end());
  std::stable_partition(notes.begin(), notes.end(), IsWarning);
  return notes;
}

std::string Table(const std::vector<CaseEntry>& cases, const std::vector<PlannedCase>& planned) {
  auto shown = [](const std::string& text) { return text.empty() ? "-" : EscapeControl(text); };
  // The rows as text; the case's name last, in what the other columns leave of the width.
  std::vector<std::vector<std::string>> rows = {{"#", "workflow", "scenario", "model", "GPUs",
                                                 "nodes", "timeout", "partition", "account",
                                                 "case"}};
  bool placed = false;  // any partition or account: else those columns are left out
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const PlannedCase& plan = planned[i];
    const std::size_t warnings = std::count_if(plan.notes.begin(), plan.notes.end(), IsWarning);
    placed = placed || !plan.placement.partition.empty() || !plan.placement.account.empty();
    rows.push_back(
        {std::to_string(cases[i].index) + (warnings ? "!" : ""), shown(plan.plan.workflow_type),
         shown(plan.scenario), shown(plan.plan.model_name),
         std::to_string(plan.plan.total_required_devices), std::to_string(plan.plan.node_count),
         ShortDuration(plan.plan.monitor_timeout_seconds), shown(plan.placement.partition),
         shown(plan.placement.account), shown(cases[i].name)});
  }
  constexpr std::size_t kPartition = 7, kAccount = 8, kCase = 9;
  // Caps of the columns that may be long (model, partition, account): the rest of the
  // width goes to the case's name.
  const std::size_t caps[] = {6, 12, 14, 20, 5, 5, 8, 16, 16, 0};
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < kCase; ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::size_t used = 0;
  for (std::size_t c = 0; c < kCase; ++c) {
    widths[c] = std::min(widths[c], caps[c]);
    if (placed || (c != kPartition && c != kAccount)) used += widths[c] + 2;
  }
  const int width = OutputWidth();
  const std::size_t case_width =
      std::max<std::size_t>(24, width > static_cast<int>(used) ? width - used : 0);
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < kCase; ++c) {
      if (!placed && (c == kPartition || c == kAccount)) continue;
      const std::string cell = Fit(row[c], widths[c]);
      line += cell + std::string(widths[c] - cell.size() + 2, ' ');
    }
    out << line << Fit(row[kCase], case_width) << "\n";
  }
  return out.str();
}

std::string NotesText(const std::vector<CaseEntry>& cases,
                      const std::vector<PlannedCase>& planned) {
  std::ostringstream out;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const std::vector<std::string> notes = CaseNotes(cases[i], planned[i]);
    if (notes.empty()) continue;
    out << "\nCase " << cases[i].index << " (" << EscapeControl(cases[i].origin)
        << "): " << EscapeControl(cases[i].name) << "\n";
    for (const std::string& note : notes) out << "  - " << EscapeControl(note) << "\n";
  }
  return out.str();
}

// {"kind": "cases_plan", "cases_file", "cases": [every case's plan, its full name]}.
std::string PlanCasesJson(const std::string& path, const std::vector<CaseEntry>& cases,
                          const std::vector<PlannedCase>& planned) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  auto integer = [&](const char* key, int value) {
    w.Key(key);
    w.Int(value);
  };
  w.StartObject();
  str("kind", "cases_plan");
  str("cases_file", path);
  w.Key("cases");
  w.StartArray();
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const PlannedCase& plan = planned[i];
    const CaseEntry& entry = cases[i];
    w.StartObject();
    integer("index", entry.index);
    str("name", entry.name);
    str("origin", entry.origin);
    str("workflow_type", plan.plan.workflow_type);
    str("scenario", plan.scenario);
    str("model_name", plan.plan.model_name);
    str("command", plan.plan.command);
    str("working_dir", plan.plan.working_dir);
    integer("required_devices", plan.plan.required_devices);
    integer("total_required_devices", plan.plan.total_required_devices);
    integer("required_devices_per_node", plan.plan.required_devices_per_node);
    integer("node_count", plan.plan.node_count);
    integer("monitor_timeout_seconds", plan.plan.monitor_timeout_seconds);
    str("partition", plan.placement.partition);
    str("account", plan.placement.account);
    w.Key("env");
    w.StartArray();
    for (const EnvVar& var : plan.plan.env) {
      const std::string text = var.name + "=" + var.value;
      w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    }
    w.EndArray();
    const std::vector<std::string> notes = CaseNotes(entry, plan);
    w.Key("warnings");
    w.StartArray();
    for (const std::string& note : notes) {
      if (IsWarning(note)) w.String(note.c_str(), static_cast<rapidjson::SizeType>(note.size()));
    }
    w.EndArray();
    w.Key("notes");
    w.StartArray();
    for (const std::string& note : notes) {
      w.String(note.c_str(), static_cast<rapidjson::SizeType>(note.size()));
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

int PlanCasesMain(const po::variables_map& vm, const CaseRequest& shared) {
  const std::string path = vm["cases"].as<std::string>();
  Result<std::vector<CaseEntry>> cases = LoadCasesFile(path, shared);
  if (!cases.ok()) return Fail("plan", cases.status());
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plan", runtime.status());
  PrintPluginProblems(runtime.value()->registry());
  Result<std::vector<PlannedCase>> planned = PlanCases(*runtime.value(), cases.value(), nullptr);
  if (!planned.ok()) return Fail("plan", planned.status());
  std::size_t warnings = 0;
  for (const PlannedCase& plan : planned.value()) {
    warnings += std::count_if(plan.notes.begin(), plan.notes.end(), IsWarning);
  }
  std::ostringstream summary;
  summary << Table(cases.value(), planned.value()) << NotesText(cases.value(), planned.value())
          << "\n"
          << planned->size() << " cases planned"
          << (warnings ? ", " + std::to_string(warnings) + " warnings (cases marked !)" : "")
          << "; nothing was written or submitted\n";
  if (vm["json"].as<bool>()) {
    std::cerr << summary.str() << std::flush;
    std::cout << PlanCasesJson(path, cases.value(), planned.value()) << std::flush;
  } else {
    std::cout << summary.str() << std::flush;
  }
  return kExitPassed;
}

}  // namespace trtllm_run::cli
