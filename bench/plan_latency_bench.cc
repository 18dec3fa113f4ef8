// plan_latency_bench: how long `trtllm-run plan` takes for each workflow on local_slurm
// with a saved slurm_env.json (no probe) and the plugins loaded, against the floor of any
// Python tool, `/usr/bin/python3 -c pass`, measured in the same run. See bench/README.md.
//
//   plan_latency_bench [--runs 50] [--check] [--trtllm-run PATH] [--source DIR]
//
// Every round runs the floor and each case once, one after another (interleaved, so load
// from other processes spreads evenly); each run is one posix_spawn of the command with
// stdout and stderr to a file, timed from spawn to exit. The work dir a plan creates is
// removed after the run, outside the timing. perf-sanity runs the repo's submit.py (a
// Python script) by design: its target is submit.py alone with the same arguments
// (captured once through a python3 wrapper) plus the Python floor, i.e. what trtllm-run
// adds must stay below the floor; submit.py runs with /usr/bin/python3 in both.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;

namespace {

#ifndef TRTLLM_RUN_SOURCE_DIR
#define TRTLLM_RUN_SOURCE_DIR "."
#endif

struct Case {
  std::string name;
  std::vector<std::string> argv;  // the full command
  std::vector<double> ms;
  std::string floor_name;        // "python3 -c pass" or "submit.py alone"; "" for a floor
  std::vector<double> cpu_ms{};  // user + system, the command and what it waited for
};

// Runs argv with stdout/stderr to `log`; returns the wall time in ms, or -1 when it did
// not exit 0 (the log then holds why). `cpu_ms` gets its user + system time.
double TimeRun(const std::vector<std::string>& argv, const std::string& log,
               double* cpu_ms = nullptr) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0) {
  }
  if (cpu_ms) {
    *cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
              (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(std::lround(q * (values.size() - 1)))];
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Fixed(double value, int digits = 1) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 50;
  bool check = false;
  std::string self_dir = fs::canonical("/proc/self/exe").parent_path().string();
  std::string trtllm_run = self_dir + "/trtllm-run";
  std::string source = TRTLLM_RUN_SOURCE_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "plan_latency_bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--runs") {
      runs = std::atoi(next().c_str());
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--trtllm-run") {
      trtllm_run = next();
    } else if (arg == "--source") {
      source = next();
    } else {
      std::cerr << "usage: plan_latency_bench [--runs N] [--check] [--trtllm-run PATH] "
                   "[--source DIR]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (runs < 1) {
    std::cerr << "plan_latency_bench: --runs must be at least 1\n";
    return 2;
  }
  const std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0 || ::access(trtllm_run.c_str(), X_OK) != 0) {
    std::cerr << "plan_latency_bench: needs " << python << " and " << trtllm_run << "\n";
    return 2;
  }

  // A writable copy of the fake TensorRT-LLM tree; a PATH whose python3 is Debian's.
  char templ[] = "/tmp/trtllm_plan_bench_XXXXXX";
  const std::string dir = ::mkdtemp(templ);
  const std::string repo = dir + "/TensorRT-LLM";
  fs::copy(source + "/tests/fixtures/trtllm", repo, fs::copy_options::recursive);
  const std::string env_file = source + "/tests/fixtures/slurm_env/cluster_a.json";
  fs::create_directories(dir + "/pybin");
  fs::create_symlink(python, dir + "/pybin/python3");
  // A python3 that records its arguments, to learn submit.py's command line.
  fs::create_directories(dir + "/capture");
  std::ofstream(dir + "/capture/python3") << "#!/bin/bash\nprintf '%s\\0' \"$@\" >" << dir
                                          << "/submit_args\nexec " << python << " \"$@\"\n";
  fs::permissions(dir + "/capture/python3", fs::perms::owner_all);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";

  const std::vector<std::string> slurm = {"--scenario",    "local_slurm",       "--slurm-env-file",
                                          env_file,        "--llm-models-root", "/models",
                                          "--models-path", "/data/models"};
  auto plan = [&](std::vector<std::string> args, const std::string& partition) {
    std::vector<std::string> full = {trtllm_run, "plan", "--repo-root", repo};
    full.insert(full.end(), args.begin(), args.end());
    full.insert(full.end(), slurm.begin(), slurm.end());
    full.insert(full.end(), {"--partition", partition});
    return full;
  };
  std::vector<Case> cases = {
      {"python3 -c pass (floor)", {python, "-c", "pass"}, {}, ""},
      {"custom", plan({"--custom-cmd", "echo hi"}, "batch"), {}, "python3 -c pass"},
      {"bench",
       plan({"--bench-cmd", "trtllm-bench --model /m/Llama-3.1-8B throughput --tp 2"}, "batch"),
       {},
       "python3 -c pass"},
      {"eval",
       plan({"--eval-cmd", "trtllm-eval --model /m/Llama-3.1-8B gsm8k"}, "batch"),
       {},
       "python3 -c pass"},
      {"pytest",
       plan({"--test-cmd",
             "pytest tests/integration/defs/accuracy/test_llm_api_pytorch.py::"
             "TestDeepSeekV3Lite::test_bfloat16"},
            "small"),
       {},
       "python3 -c pass"},
      {"perf-sanity",
       plan({"--test-cmd",
             "pytest perf/test_perf_sanity.py -v 'test_e2e[disagg-e2e-gb200_deepseek-r1-fp4_"
             "1k1k_con1_ctx1_dep4_gen1_tep8_eplb0_mtp3_ccb-UCX]'"},
            "grace"),
       {},
       "submit.py alone"},
  };
  const std::string log = dir + "/run.log";
  auto clean = [&]() {
    std::error_code ignored;
    fs::remove_all(repo + "/work_dirs", ignored);
  };

  // Capture submit.py's arguments once; its floor re-creates the work dir it writes to.
  ::setenv("PATH", (dir + "/capture:" + old_path).c_str(), 1);
  if (TimeRun(cases.back().argv, log) < 0) {
    std::cerr << "plan_latency_bench: perf-sanity plan failed:\n" << ReadAll(log);
    return 3;
  }
  std::vector<std::string> submit = {python};
  {
    std::string raw = ReadAll(dir + "/submit_args");
    for (size_t start = 0; start < raw.size();) {
      size_t end = raw.find('\0', start);
      if (end == std::string::npos) end = raw.size();
      submit.push_back(raw.substr(start, end - start));
      start = end + 1;
    }
  }
  std::string launch_dir;
  for (size_t i = 1; i + 1 < submit.size(); ++i) {
    if (submit[i] == "--launch-sh") launch_dir = fs::path(submit[i + 1]).parent_path().string();
  }
  cases.push_back({"submit.py alone (perf-sanity floor)", submit, {}, ""});
  clean();
  ::setenv("PATH", (dir + "/pybin:" + old_path).c_str(), 1);

  std::cerr << "plan_latency_bench: " << runs << " rounds of " << cases.size()
            << " commands, interleaved\n";
  for (int round = 0; round < runs; ++round) {
    for (Case& c : cases) {
      if (!launch_dir.empty() && c.argv == submit) fs::create_directories(launch_dir);
      double cpu = 0;
      double ms = TimeRun(c.argv, log, &cpu);
      if (ms < 0) {
        std::cerr << "plan_latency_bench: '" << c.name << "' failed:\n" << ReadAll(log);
        return 3;
      }
      c.ms.push_back(ms);
      c.cpu_ms.push_back(cpu);
      clean();
    }
  }
  fs::remove_all(dir);

  auto find = [&](const std::string& prefix) -> const Case& {
    for (const Case& c : cases) {
      if (c.name.rfind(prefix, 0) == 0) return c;
    }
    return cases.front();
  };
  const double floor = Quantile(find("python3").ms, 0.5);
  const double submit_floor = Quantile(find("submit.py").ms, 0.5);
  std::cout << "\ntrtllm-run plan latency, local_slurm with a saved slurm_env.json, " << runs
            << " runs each (ms)\n";
  std::cout << std::left << std::setw(38) << "command" << std::setw(10) << "median" << std::setw(10)
            << "p90" << std::setw(10) << "CPU" << std::setw(22) << "target (median)"
            << "result\n";
  bool all = true;
  for (const Case& c : cases) {
    double median = Quantile(c.ms, 0.5), p90 = Quantile(c.ms, 0.9);
    std::string target, verdict;
    if (!c.floor_name.empty()) {
      // perf-sanity: what trtllm-run adds to submit.py must stay below the Python floor.
      bool perf = c.floor_name == "submit.py alone";
      double limit = perf ? submit_floor + floor : floor;
      target = "< " + Fixed(limit) + (perf ? " (submit+py)" : " (py)");
      bool pass = median < limit;
      all = all && pass;
      verdict = pass ? "PASS" : "MISS";
      double own = perf ? median - submit_floor : median;
      verdict += "  (own part " + Fixed(own) + " = " + Fixed(100.0 * own / floor, 0) +
                 "% of the py floor)";
    } else {
      target = "baseline";
    }
    std::cout << std::left << std::setw(38) << c.name << std::setw(10) << Fixed(median)
              << std::setw(10) << Fixed(p90) << std::setw(10) << Fixed(Quantile(c.cpu_ms, 0.5))
              << std::setw(22) << target << verdict << "\n";
  }
  std::cout << "wall: spawn to exit; CPU: user + system of the command and its children "
               "(median; load from other processes inflates wall, hardly CPU)\n";
  std::cout << "reference: the original Python script builder took 31.5 ms per script on "
               "Debian's python3 here, 100 ms through a pyenv shim\n";
  std::cout << "\nresult: " << (all ? "targets met" : "TARGETS MISSED") << "\n";
  return check && !all ? 1 : 0;
}
