// mcp_latency_bench: what an agent waits for a plan. A `tools/call plan_case` round trip
// to a warm MCP server (in this process: trtllm_run_mcp's Server over the plugins already
// loaded; and over stdio to a warm `trtllm-run mcp`), against `trtllm-run plan` as a
// process, the same request, measured interleaved in the same run. See bench/README.md.
//
//   mcp_latency_bench [--runs 50] [--check] [--trtllm-run PATH] [--source DIR]
//
// Each round runs, for each case (custom and pytest on local_slurm with a saved
// slurm_env.json, in a copy of the fake TensorRT-LLM tree): the process, the in-process
// call and the stdio call, one after another; the work dir each plan writes is removed
// after it, outside the timing. Target: the in-process round trip's median is below half
// the process's (the plan itself is the same work; the rest is what a process costs).
#include <fcntl.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/server.h"
#include "trtllm_run/runtime.h"

extern char** environ;
namespace fs = std::filesystem;

namespace {

#ifndef TRTLLM_RUN_SOURCE_DIR
#define TRTLLM_RUN_SOURCE_DIR "."
#endif

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double P90(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(std::lround(0.9 * (values.size() - 1)))];
}

bool IsResponse(const std::string& line, int id, bool* is_error) {
  rapidjson::Document doc;
  doc.Parse(line.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("id") || !doc["id"].IsInt() ||
      doc["id"].GetInt() != id) {
    return false;
  }
  *is_error =
      doc.HasMember("error") || (doc.HasMember("result") && doc["result"].HasMember("isError"));
  return true;
}

// `trtllm-run plan ARGS` as a process: ms from spawn to exit, -1 when it failed.
double TimePlanProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  Clock::time_point start = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  double ms = MsSince(start);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

// The server in this process; the sink hands responses to the waiting caller.
class InProcess {
 public:
  explicit InProcess(trtllm_run::Runtime* runtime)
      : server_(runtime, {}, [this](const std::string& line) {
          std::lock_guard<std::mutex> lock(mu_);
          lines_.push_back(line);
          arrived_.notify_all();
          return true;
        }) {}
  // ms from handing the request over to holding its response; -1 on an error reply.
  double RoundTrip(const std::string& request, int id) {
    Clock::time_point start = Clock::now();
    server_.HandleMessage(request);
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      for (auto it = lines_.begin(); it != lines_.end(); ++it) {
        bool error = false;
        if (IsResponse(*it, id, &error)) {
          lines_.erase(it);
          double ms = MsSince(start);
          return error ? -1 : ms;
        }
      }
      arrived_.wait(lock);
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable arrived_;
  std::deque<std::string> lines_;
  trtllm_run::mcp::Server server_;
};

// A warm `trtllm-run mcp` over pipes.
class OverStdio {
 public:
  explicit OverStdio(const std::string& trtllm_run) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) std::exit(3);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args = {const_cast<char*>(trtllm_run.c_str()), const_cast<char*>("mcp"),
                               nullptr};
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) std::exit(3);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  ~OverStdio() {
    close(in_);
    int status = 0;
    waitpid(pid_, &status, 0);
    close(out_);
  }
  double RoundTrip(const std::string& request, int id) {
    Clock::time_point start = Clock::now();
    std::string line = request + "\n";
    if (write(in_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return -1;
    while (true) {
      std::size_t newline;
      while ((newline = buffer_.find('\n')) != std::string::npos) {
        std::string message = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        bool error = false;
        if (IsResponse(message, id, &error)) return error ? -1 : MsSince(start);
      }
      char chunk[65536];
      ssize_t n = read(out_, chunk, sizeof chunk);
      if (n <= 0) return -1;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  pid_t pid_ = 0;
  int in_ = -1, out_ = -1;
  std::string buffer_;
};

struct Case {
  std::string name;
  std::vector<std::string> flags;  // trtllm-run plan flags
  std::string arguments;           // the same as plan_case arguments (JSON)
  std::vector<double> process_ms, in_process_ms, stdio_ms;
};

std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The table: per case the process (baseline), the in-process and the stdio round trip.
// True when every case met the target.
bool PrintReport(const std::vector<Case>& cases, int runs) {
  auto fixed = [](double value) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2) << value;
    return out.str();
  };
  std::cout
      << "\nplan_case round trip vs trtllm-run plan, local_slurm with a saved slurm_env.json, "
      << runs << " runs each (ms)\n";
  std::cout << std::left << std::setw(48) << "case / way" << std::setw(10) << "median"
            << std::setw(10) << "p90" << std::setw(22) << "target (median)"
            << "result\n";
  bool all = true;
  for (const Case& c : cases) {
    double process = Median(c.process_ms);
    double inside = Median(c.in_process_ms);
    bool pass = inside < process / 2;
    all = all && pass;
    std::cout << std::setw(48) << c.name + ": trtllm-run plan (a process)" << std::setw(10)
              << fixed(process) << std::setw(10) << fixed(P90(c.process_ms)) << std::setw(22)
              << "baseline"
              << "\n";
    std::cout << std::setw(48) << c.name + ": tools/call plan_case, in-process warm"
              << std::setw(10) << fixed(inside) << std::setw(10) << fixed(P90(c.in_process_ms))
              << std::setw(22) << "< " + fixed(process / 2) + " (process/2)"
              << (pass ? "PASS" : "MISS") << "  (" << fixed(process / inside) << "x faster)\n";
    std::cout << std::setw(48) << c.name + ": tools/call plan_case, stdio to warm mcp"
              << std::setw(10) << fixed(Median(c.stdio_ms)) << std::setw(10)
              << fixed(P90(c.stdio_ms)) << std::setw(22) << "-"
              << "\n";
  }
  std::cout << "\nresult: " << (all ? "targets met" : "TARGETS MISSED") << "\n";
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 50;
  bool check = false;
  std::string trtllm_run = fs::canonical("/proc/self/exe").parent_path().string() + "/trtllm-run";
  std::string source = TRTLLM_RUN_SOURCE_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--trtllm-run" && i + 1 < argc) {
      trtllm_run = argv[++i];
    } else if (arg == "--source" && i + 1 < argc) {
      source = argv[++i];
    } else {
      std::cerr
          << "usage: mcp_latency_bench [--runs N] [--check] [--trtllm-run PATH] [--source DIR]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (runs < 1 || access(trtllm_run.c_str(), X_OK) != 0) {
    std::cerr << "mcp_latency_bench: needs --runs >= 1 and " << trtllm_run << "\n";
    return 2;
  }
  char templ[] = "/tmp/trtllm_mcp_bench_XXXXXX";
  const std::string dir = mkdtemp(templ);
  const std::string repo = dir + "/TensorRT-LLM";
  fs::copy(source + "/tests/fixtures/trtllm", repo, fs::copy_options::recursive);
  const std::string env_file = source + "/tests/fixtures/slurm_env/cluster_a.json";
  const std::string common_json =
      ",\"repo_root\":" + Quote(repo) +
      ",\"scenario\":\"local_slurm\",\"slurm_env_file\":" + Quote(env_file) +
      ",\"llm_models_root\":\"/models\",\"models_path\":\"/data/models\"";
  const std::vector<std::string> common = {
      "--repo-root",       repo,      "--scenario",    "local_slurm", "--slurm-env-file", env_file,
      "--llm-models-root", "/models", "--models-path", "/data/models"};
  const std::string test =
      "pytest "
      "tests/integration/defs/accuracy/test_llm_api_pytorch.py::TestDeepSeekV3Lite::test_bfloat16";
  std::vector<Case> cases = {
      {"custom",
       {"--custom-cmd", "echo hi", "--partition", "batch"},
       "{\"custom_cmd\":\"echo hi\",\"partition\":\"batch\"" + common_json + "}",
       {},
       {},
       {}},
      {"pytest",
       {"--test-cmd", test, "--partition", "small"},
       "{\"test_cmd\":" + Quote(test) + ",\"partition\":\"small\"" + common_json + "}",
       {},
       {},
       {}},
  };
  auto clean = [&] {
    std::error_code ignored;
    fs::remove_all(repo + "/work_dirs", ignored);
  };

  trtllm_run::RuntimeOptions options;
  trtllm_run::Result<std::unique_ptr<trtllm_run::Runtime>> runtime =
      trtllm_run::Runtime::Create(options);
  if (!runtime.ok()) {
    std::cerr << "mcp_latency_bench: " << runtime.status().ToString() << "\n";
    return 3;
  }
  InProcess in_process(runtime.value().get());
  OverStdio stdio(trtllm_run);
  const std::string init =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
      "\"2025-11-25\","
      "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
  in_process.RoundTrip(init, 0);
  stdio.RoundTrip(init, 0);
  int id = 1;
  auto request = [&](const Case& c) {
    return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
           ",\"method\":\"tools/call\",\"params\":{\"name\":\"plan_case\",\"arguments\":" +
           c.arguments + "}}";
  };
  for (Case& c : cases) {  // warm both servers (first plan loads what it loads lazily)
    in_process.RoundTrip(request(c), id);
    stdio.RoundTrip(request(c), id);
    ++id;
    clean();
  }
  std::cerr << "mcp_latency_bench: " << runs << " rounds of " << cases.size()
            << " cases x 3 ways, interleaved\n";
  for (int round = 0; round < runs; ++round) {
    for (Case& c : cases) {
      std::vector<std::string> plan = {trtllm_run, "plan"};
      plan.insert(plan.end(), c.flags.begin(), c.flags.end());
      plan.insert(plan.end(), common.begin(), common.end());
      double process = TimePlanProcess(plan);
      clean();
      double inside = in_process.RoundTrip(request(c), id);
      ++id;
      clean();
      double piped = stdio.RoundTrip(request(c), id);
      ++id;
      clean();
      if (process < 0 || inside < 0 || piped < 0) {
        std::cerr << "mcp_latency_bench: a plan of '" << c.name << "' failed\n";
        return 3;
      }
      c.process_ms.push_back(process);
      c.in_process_ms.push_back(inside);
      c.stdio_ms.push_back(piped);
    }
  }
  fs::remove_all(dir);

  bool all = PrintReport(cases, runs);
  return check && !all ? 1 : 0;
}
