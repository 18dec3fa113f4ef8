// trtllm-run mcp: a Model Context Protocol server over stdio (mcp/server.h) for coding
// agents. stdout carries protocol messages only: the descriptors the client gave are
// moved aside first and fd 1 becomes stderr, so nothing any library or child prints can
// reach the protocol stream.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "mcp/server.h"
#include "mcp/transport.h"

namespace trtllm_run::cli {

namespace {

// The protocol's input and output on descriptors of their own (close-on-exec); stdin
// becomes /dev/null and stdout a copy of stderr.
bool TakeStdio(int* in, int* out) {
  *in = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  *out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (*in < 0 || *out < 0 || null < 0) return false;
  ::dup2(null, 0);
  ::close(null);
  ::dup2(2, 1);
  return true;
}

std::string SelfPath() {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
}

}  // namespace

int McpMain(int argc, char** argv) {
  po::options_description options("MCP server");
  options.add_options()(
      "max-message-bytes",
      po::value<std::size_t>()->value_name("N")->default_value(mcp::kDefaultMaxMessageBytes),
      "refuse (JSON-RPC -32600) messages longer than this, unread")(
      "max-in-flight", po::value<int>()->value_name("N")->default_value(16),
      "tool calls running at once")("verbose", po::bool_switch(),
                                    "log every message (first 300 bytes) on stderr");
  options.add(HistoryOptions()).add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("mcp", argc, argv, options, &vm)) return *done;
  std::size_t max_bytes = vm["max-message-bytes"].as<std::size_t>();
  if (max_bytes < 1024) return UsageError("mcp", "--max-message-bytes must be >= 1024");
  if (vm["max-in-flight"].as<int>() < 1) return UsageError("mcp", "--max-in-flight must be >= 1");
  if (Result<std::string> history = HistoryPathFromFlags(vm, nullptr); !history.ok()) {
    return UsageError("mcp", history.status().message(), history.status().hint());
  }

  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("mcp", runtime.status());
  PrintPluginProblems(runtime.value()->registry());
  int in = -1, out = -1;
  if (!TakeStdio(&in, &out)) {
    std::cerr << "trtllm-run mcp: error: cannot set up stdin/stdout\n";
    return kExitError;
  }

  mcp::ServerOptions server_options;
  server_options.tools.trtllm_run = SelfPath();
  if (vm.count("plugin-dir")) {
    server_options.tools.plugin_dirs = vm["plugin-dir"].as<std::vector<std::string>>();
  }
  if (vm.count("clusters")) server_options.tools.clusters_file = vm["clusters"].as<std::string>();
  // What the server starts records in, and the history tools read, the server's history.
  if (vm.count("history")) {
    std::error_code error;
    server_options.tools.history_args = {
        "--history", std::filesystem::absolute(vm["history"].as<std::string>(), error).string()};
  } else if (vm["no-history"].as<bool>()) {
    server_options.tools.history_args = {"--no-history"};
  }
  server_options.max_in_flight = vm["max-in-flight"].as<int>();
  server_options.verbose = vm["verbose"].as<bool>();
  mcp::LineWriter writer(out);
  CancellationToken stop;
  ScopedSignalCancellation on_signal(&stop, {SIGINT, SIGTERM, SIGHUP});
  mcp::Server server(runtime.value().get(), server_options,
                     [&](const std::string& message) { return writer.Write(message); });
  std::cerr << "trtllm-run mcp: serving MCP (" << mcp::kModernVersion
            << ", 2025-11-25, 2025-06-18) on stdio\n";

  mcp::LineReader reader(in, max_bytes);
  std::string line;
  std::size_t oversized = 0;
  const char* ended = "stdin closed";
  while (!writer.broken()) {
    mcp::LineReader::Event event = reader.Next(&line, &oversized, stop.wait_fd());
    if (event == mcp::LineReader::Event::kLine) {
      if (line.find_first_not_of(" \t") != std::string::npos) server.HandleMessage(line);
    } else if (event == mcp::LineReader::Event::kOversized) {
      server.HandleOversized(oversized, max_bytes);
    } else {
      if (event == mcp::LineReader::Event::kStopped) ended = "signal";
      if (event == mcp::LineReader::Event::kError) ended = "read error";
      break;
    }
  }
  if (writer.broken()) ended = "stdout closed";
  server.Shutdown();
  std::cerr << "trtllm-run mcp: stopped (" << ended << "); started cases keep running\n";
  return kExitPassed;
}

}  // namespace trtllm_run::cli
