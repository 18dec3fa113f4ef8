// The HTML report (report/html_report.h): `--html FILE` on run, run --cases, exec and
// stage, and `trtllm-run report RUN_DIR --html FILE` after the fact.
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "history/history_store.h"
#include "report/html_report.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

// The history store the report reads flaky tests from: the one runs record in, opened
// only when it exists (a report never creates a store); null when there is none.
std::unique_ptr<history::HistoryStore> OpenHistoryForReport(const po::variables_map& vm,
                                                            std::string* note) {
  Result<std::string> path = HistoryPathFromFlags(vm, nullptr);
  if (!path.ok() || path->empty()) {
    *note = "no history store was read (--no-history)";
    return nullptr;
  }
  std::error_code error;
  if (!std::filesystem::exists(path.value(), error)) {
    *note = "no history store at " + path.value();
    return nullptr;
  }
  Result<std::unique_ptr<history::HistoryStore>> store = history::OpenSqliteStore(path.value());
  if (!store.ok()) {
    *note = "the history store could not be opened: " + store.status().message();
    return nullptr;
  }
  return std::move(store.value());
}

Status WriteReport(const po::variables_map& vm, const std::string& run_dir,
                   const std::string& html_path, bool query_scheduler) {
  std::string note;
  std::unique_ptr<history::HistoryStore> store = OpenHistoryForReport(vm, &note);
  report::HtmlReportOptions options;
  options.history = store.get();
  options.query_scheduler = query_scheduler;
  Result<report::ReportModel> model = report::CollectReport(run_dir, options);
  if (!model.ok()) return model.status();
  if (!store) model->history_note = note;
  return WriteFileAtomic(html_path, report::RenderHtmlReport(model.value()));
}

}  // namespace

po::options_description HtmlOptions() {
  po::options_description options("Report");
  options.add_options()(
      "html", po::value<std::string>()->value_name("PATH"),
      "also write one self-contained HTML report to PATH at the end (summary, a filterable "
      "test table, failures with their log, reruns and flaky tests, the jobs' timeline, perf "
      "charts; no external URL): docs/report.md. PATH is checked before anything runs");
  return options;
}

Status CheckHtmlFlag(const po::variables_map& vm) {
  if (!vm.count("html")) return Status::Ok();
  return CheckOutputFile(vm["html"].as<std::string>(), "--html");
}

void WriteHtmlIfAsked(const std::string& subcommand, const po::variables_map& vm,
                      const std::string& run_dir) {
  if (!vm.count("html")) return;
  const std::string path = vm["html"].as<std::string>();
  Status written = WriteReport(vm, run_dir, path, true);
  if (!written.ok()) {
    std::cerr << "trtllm-run " << subcommand << ": error: --html: " << written.ToString() << "\n";
    return;
  }
  std::cerr << "report:     " << EscapeControl(path) << "\n";
}

int ReportMain(int argc, char** argv) {
  po::options_description report_options("Report");
  report_options.add_options()(
      "html", po::value<std::string>()->value_name("PATH"),
      "write the self-contained HTML report to PATH (atomically: a temp file, then rename)")(
      "no-scheduler", po::bool_switch(),
      "do not ask sacct for the Slurm jobs' submit/start/end times: the timeline then shows "
      "trtllm-run's own start and end of each job");
  po::options_description visible;
  visible.add(report_options).add(HistoryOptions());
  CommandUsage usage;
  usage.positional = "RUN_DIR";
  usage.about =
      "Writes the HTML report of a finished run: RUN_DIR is a run's work dir, a `run --cases` "
      "dir or a stage's dir (each holds the result.json it wrote). The flaky tests come from "
      "the history store when it exists; the Slurm jobs' queued and running times from "
      "sacct. Exit 0 written, 2 bad input (nothing written), 3 the file could not be written.";
  po::variables_map vm;
  if (std::optional<int> done = Parse("report", argc, argv, visible, &vm, usage)) return *done;
  if (Result<std::string> history = HistoryPathFromFlags(vm, nullptr); !history.ok()) {
    return UsageError("report", history.status().message(), history.status().hint());
  }
  if (!vm.count("html")) {
    return UsageError("report", "give --html PATH: the file the report is written to");
  }
  if (Status writable = CheckHtmlFlag(vm); !writable.ok()) return Fail("report", writable);
  const std::string run_dir = Positional(vm);
  std::error_code error;
  if (!std::filesystem::is_directory(run_dir, error)) {
    return UsageError("report", "RUN_DIR '" + EscapeControl(run_dir) + "' is not a directory",
                      "give the directory of a finished run (its result.json is read)");
  }
  Status written =
      WriteReport(vm, run_dir, vm["html"].as<std::string>(), !vm["no-scheduler"].as<bool>());
  if (!written.ok()) return Fail("report", written);
  std::cerr << "report:     " << EscapeControl(vm["html"].as<std::string>()) << "\n";
  return 0;
}

}  // namespace trtllm_run::cli
