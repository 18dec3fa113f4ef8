// slurm_watch_bench: what watching many Slurm jobs costs the scheduler, the watcher's host
// and an SSH login node, and how soon a verdict follows a job's end, for trtllm-run's
// SlurmWatcher against naive pollers measured in the same run. See bench/README.md.
//
//   slurm_watch_bench [--sizes 50,200] [--seconds 5] [--partition batch,cpu] [--separate]
//                     [--remote] [--remote-jobs 8] [--rss-jobs 1000] [--rss-rounds 3]
//                     [--rss-target-mb 50] [--no-naive] [--check]
//   slurm_watch_bench --smoke      (CI: 10 jobs, 2 remote jobs, RSS for 100 held jobs)
//
// Scheduler RPCs are read from the daemons themselves: slurmctld's `sdiag` and slurmdbd's
// `sacctmgr show stats`, as deltas over each watcher's run. Run as root, each watcher runs
// as its own unprivileged user (created if missing: trtllm-bench for trtllm-run's watcher,
// trtllm-bench-naive for the naive one) so that its RPCs are counted apart from
// everything else the cluster serves (the per-user tables), and both watch the same jobs
// at the same time; otherwise they run one after the other and the per-message-type
// deltas of the query RPCs are used, which other users of the cluster inflate.
//
// Every job this benchmark submits is named trtllm-bench-<pid>; all of them are cancelled
// (`scancel --name`) at the end, on a failure and on SIGINT/SIGTERM/SIGHUP.
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "os/ssh.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/slurm/watch.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

// The end-marker token of the benchmark's job scripts: made by the process that submits
// them, passed to the watcher processes in their job list.
std::string g_end_token;

// Verdict delay target of a bulk watch of short jobs: SlurmWatchOptions::max_confirm_wait
// (30 s, what a confirmation the budget cannot pay for yet waits at most) plus a second for
// the output tick and the query itself.
constexpr double kBulkDelayTarget = 31;
const std::string& BenchEndToken();

const char kWatchUser[] = "trtllm-bench";
const char kNaiveUser[] = "trtllm-bench-naive";
const char kSshDir[] = "/run/trtllm-test-sshd";
const char kSshHost[] = "trtllm-bench-login";

double Epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Shell(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[8192];
  std::size_t n;
  while ((n = ::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  int rc = ::pclose(pipe);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

double Quantile(std::vector<double> values, double quantile = 0.5) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t index = static_cast<std::size_t>(std::round(quantile * (values.size() - 1)));
  return values[index];
}

std::string Num(double value, int precision = 2) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

// ------------------------------------------------------------------ cleanup

// The job name of everything this run submits, and `scancel --name NAME` prepared before
// any signal can arrive (the handler only forks, execs and waits).
char g_tag[64];
char g_scancel[256];

void CancelOurJobs() {
  if (g_tag[0] == '\0') return;
  Shell(std::string("scancel --name=") + g_tag + " >/dev/null 2>&1");
}

void OnSignal(int signo) {
  if (g_scancel[0] != '\0') {
    pid_t pid = ::fork();
    if (pid == 0) {
      char name_arg[80];
      std::snprintf(name_arg, sizeof name_arg, "--name=%s", g_tag);
      char* argv[] = {g_scancel, name_arg, nullptr};
      ::execv(g_scancel, argv);
      ::_exit(127);
    }
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  ::_exit(128 + signo);
}

void InstallCleanup() {
  std::snprintf(g_tag, sizeof g_tag, "trtllm-bench-%d", static_cast<int>(::getpid()));
  std::string scancel = Shell("command -v scancel");
  while (!scancel.empty() && scancel.back() == '\n') scancel.pop_back();
  std::snprintf(g_scancel, sizeof g_scancel, "%s", scancel.c_str());
  for (int signo : {SIGINT, SIGTERM, SIGHUP}) ::signal(signo, OnSignal);
}

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "slurm_watch_bench: " << message << "\n";
  CancelOurJobs();
  std::exit(3);
}

// ------------------------------------------------------------------ scheduler RPCs

// RPC counters of one daemon: by message type and by user.
struct RpcCounts {
  std::map<std::string, long> by_type;
  std::map<std::string, long> by_user;
};

RpcCounts ParseStats(const std::string& text) {
  RpcCounts counts;
  enum { kNone, kType, kUser } section = kNone;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("statistics by message type") != std::string::npos) {
      section = kType;
      continue;
    }
    if (line.find("statistics by user") != std::string::npos) {
      section = kUser;
      continue;
    }
    if (line.find("Pending RPC") != std::string::npos) section = kNone;
    std::size_t count = line.find("count:");
    if (section == kNone || count == std::string::npos) continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    name = name.substr(0, name.find('('));  // "long-user-name(  995)": no space before "("
    long value = std::atol(line.c_str() + count + 6);
    (section == kType ? counts.by_type : counts.by_user)[name] = value;
  }
  return counts;
}

RpcCounts Controller() { return ParseStats(Shell("sdiag 2>/dev/null")); }
RpcCounts Dbd() { return ParseStats(Shell("sacctmgr show stats 2>/dev/null")); }

bool IsControllerQuery(const std::string& type) {
  static const char* const kQueries[] = {
      "REQUEST_JOB_INFO",       "REQUEST_JOB_INFO_SINGLE",    "REQUEST_JOB_USER_INFO",
      "REQUEST_PARTITION_INFO", "REQUEST_NODE_INFO",          "REQUEST_NODE_INFO_SINGLE",
      "REQUEST_FED_INFO",       "REQUEST_BUILD_INFO",         "REQUEST_PING",
      "REQUEST_JOB_STEP_INFO",  "REQUEST_RESERVATION_INFO",   "REQUEST_LICENSE_INFO",
      "REQUEST_SHARE_INFO",     "REQUEST_PRIORITY_FACTORS",   "REQUEST_FRONT_END_INFO",
      "REQUEST_ASSOC_MGR_INFO", "REQUEST_JOB_ALLOCATION_INFO"};
  for (const char* query : kQueries) {
    if (type == query) return true;
  }
  return false;
}

bool IsDbdQuery(const std::string& type) {
  return type.rfind("DBD_GET_", 0) == 0 && type != "DBD_GET_STATS";
}

long Delta(const std::map<std::string, long>& before, const std::map<std::string, long>& after,
           const std::function<bool(const std::string&)>& keep) {
  long total = 0;
  for (const auto& [name, value] : after) {
    if (!keep(name)) continue;
    auto it = before.find(name);
    total += value - (it == before.end() ? 0 : it->second);
  }
  return total;
}

bool EnsureUser(const char* user) {
  int status = 0;
  Shell(std::string("id -u ") + user + " >/dev/null 2>&1", &status);
  if (status == 0) return true;
  Shell(std::string("useradd -r -M -s /usr/sbin/nologin ") + user + " >/dev/null 2>&1", &status);
  return status == 0;
}

// ------------------------------------------------------------------ the watcher processes

// A Scenario that counts the commands it forwards (round trips over an SSH master).
class CountingScenario : public Scenario {
 public:
  explicit CountingScenario(Scenario* inner) : inner_(inner) {}
  std::string Name() const override { return inner_->Name(); }
  bool IsRemote() const override { return inner_->IsRemote(); }
  using Scenario::Run;
  Result<CommandOutput> Run(const Command& command, Deadline deadline) override {
    ++commands_;
    return inner_->Run(command, deadline);
  }
  Result<std::unique_ptr<ChildProcess>> Start(const Command& command) override {
    return inner_->Start(command);  // counted by the client (stream_starts)
  }
  int commands() const { return commands_; }

 private:
  Scenario* inner_;
  int commands_ = 0;
};

long VmHwmKb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

double CpuSeconds(const rusage& usage) {
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

void PrintUsage(double started, int rounds) {
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  std::printf("usage %.6f %.6f %ld %.6f %d\n", CpuSeconds(self), CpuSeconds(children), VmHwmKb(),
              Epoch() - started, rounds);
}

void PrintVerdict(const std::string& id, const std::string& status) {
  std::printf("verdict %s %s %.6f\n", id.c_str(), status.c_str(), Epoch());
  std::fflush(stdout);
}

struct WatchArgs {
  // ours | naive | ours-remote | ours-remote-copy | naive-remote | naive-master
  std::string mode;
  std::string list;  // "token T" (the jobs' end-marker token), then lines "ID OUT_PATH [LOCAL_OUT]"
  int rounds = 0;    // > 0: stop after this many query rounds (no verdicts awaited)
  std::string ssh_config;
};

// The watcher process. Prints one line per verdict ("verdict <id> <STATUS> <epoch>"), then
// "usage <own cpu s> <commands' cpu s> <VmHWM kB> <wall s> <rounds>", and for the remote
// modes "ssh <connections opened> <commands sent>".
int WatchMain(const WatchArgs& args) {
  double started = Epoch();
  std::vector<std::vector<std::string>> jobs;
  std::ifstream list(args.list);
  for (std::string line; std::getline(list, line);) {
    std::vector<std::string> words = Split(line, ' ');
    if (words.size() == 2 && words[0] == "token") {
      g_end_token = words[1];  // the submitting process's: the watcher is another process
    } else if (!words.empty()) {
      jobs.push_back(words);
    }
  }
  bool ours_remote = args.mode == "ours-remote" || args.mode == "ours-remote-copy";
  bool remote = ours_remote || args.mode == "naive-remote" || args.mode == "naive-master";
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  std::unique_ptr<SshScenario> ssh;  // one master connection (not for naive-remote)
  Scenario* base = local.get();
  if (ours_remote || args.mode == "naive-master") {
    SshOptions options;
    options.destination = kSshHost;
    options.ssh_config_file = args.ssh_config;
    Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options);
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      return 3;
    }
    ssh = std::move(made.value());
    base = ssh.get();
  }
  CountingScenario counting(base);
  if (args.mode == "ours" || ours_remote) {
    // ours-remote: the remote output streamed by one follower over the master (its starts
    // are round trips too: counted by the client); ours-remote-copy: without it, as before
    // the follower, one `tail -c` copy per second for all jobs.
    SlurmClientOptions client_options;
    client_options.stream_output = args.mode != "ours-remote-copy";
    SlurmClient client(&counting, client_options);
    SlurmWatchOptions options;
    // Bulk mode: the confirmations of clean ends within the bulk query budget.
    options.confirm_queries_per_job_minute = 1.2;  // kBulkConfirmQueriesPerJobMinute
    // As remote_slurm reads remote output (slurm_run.cc WatchOptions: max(1 s, the poll
    // interval) while the output is not streamed).
    if (remote) options.log_interval = 1.0;
    SlurmWatcher watcher(&client, options);
    for (const std::vector<std::string>& words : jobs) {
      SlurmWatchJob job;
      job.job_id = words[0];
      job.out_path = words[1];
      job.local_out = words.size() > 2 ? words[2] : words[1];
      job.err_path = job.out_path.substr(0, job.out_path.size() - 4) + ".err";
      job.local_err = job.local_out.substr(0, job.local_out.size() - 4) + ".err";
      job.scenario = "bench";
      job.end_marker_token = BenchEndToken();
      watcher.Add(job);
    }
    if (args.rounds > 0) {
      while (client.stats().controller_queries < args.rounds) {
        for (SlurmVerdict& verdict : watcher.Poll(nullptr, 5.0)) {
          PrintVerdict(verdict.job_id, RunStatusName(verdict.result.status));
        }
      }
    } else if (!jobs.empty()) {
      watcher.Run(nullptr, [](SlurmVerdict verdict) {
        PrintVerdict(verdict.job_id, RunStatusName(verdict.result.status));
      });
    }
    const SlurmClientStats& stats = client.stats();
    std::printf("client controller_queries=%d accounting_queries=%d config_queries=%d\n",
                stats.controller_queries, stats.accounting_queries, stats.config_queries);
    if (ssh) {
      std::printf("ssh %d %d\n", ssh->connections_opened(),
                  counting.commands() + stats.stream_starts);
      ssh->Close().IgnoreError();
    }
    PrintUsage(started, stats.controller_queries);
    return 0;
  }
  // The naive watchers: every second, one squeue per job still watched (naive-remote: one
  // `ssh HOST squeue ...` each, a new SSH connection every time; naive-master: the same
  // commands over one SSH master connection).
  std::vector<bool> done(jobs.size(), false);
  std::size_t left = jobs.size();
  int queries = 0, rounds = 0;
  while (left > 0 && (args.rounds == 0 || rounds < args.rounds)) {
    auto round = std::chrono::steady_clock::now();
    ++rounds;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (done[i]) continue;
      const std::string& id = jobs[i][0];
      std::vector<std::string> argv = {"squeue", "-h", "-t", "all", "-j", id, "-o", "%T"};
      if (args.mode == "naive-remote") {
        argv = {"ssh",           "-F",     args.ssh_config,        "-o",
                "BatchMode=yes", kSshHost, RemoteCommandLine(argv)};
      }
      Result<CommandOutput> out = counting.Run(argv, "");
      ++queries;
      if (!out.ok() || args.rounds > 0) continue;
      std::string state = NormalizeSlurmState(out->stdout_text);
      bool gone = out->exit_code == 1 && IsInvalidJobIdError(out->stderr_text);
      if (IsTerminalSlurmState(state) || gone) {
        done[i] = true;
        --left;
        PrintVerdict(id, state == "COMPLETED" ? "PASSED" : state.empty() ? "GONE" : state);
      }
    }
    if (left > 0 && (args.rounds == 0 || rounds < args.rounds)) {
      std::this_thread::sleep_until(round + std::chrono::seconds(1));
    }
  }
  std::printf("client squeue_calls=%d\n", queries);
  if (ssh) {
    std::printf("ssh %d %d\n", ssh->connections_opened(), counting.commands());
    ssh->Close().IgnoreError();
  } else if (remote) {
    std::printf("ssh %d %d\n", queries, queries);
  }
  PrintUsage(started, rounds);
  return 0;
}

// ------------------------------------------------------------------ measuring

struct JobTimes {
  std::string id;
  std::string out;            // where this process reads it
  double start = 0, end = 0;  // the job's own clock (this host)
  double verdict = 0;         // when the watcher had its verdict
  std::string status;
};

// What one watcher did to one set of jobs.
struct Measure {
  std::string name;
  std::vector<JobTimes> jobs;
  long ctld_queries = 0;  // attributed to the watcher
  long dbd_queries = 0;
  double job_minutes = 0;
  double median_delay = 0, p90_delay = 0, max_delay = 0;
  double wall = 0;
  double cpu_self = 0, cpu_children = 0;
  long hwm_kb = 0;
  int rounds = 0;
  int not_passed = 0;
  int ssh_connections = 0, ssh_commands = 0;
  std::string client_line;

  double QueriesPerJobMinute() const {
    return job_minutes > 0 ? (ctld_queries + dbd_queries) / job_minutes : 0.0;
  }
  double CpuPerJobMinuteMs() const {
    return job_minutes > 0 ? 1000 * (cpu_self + cpu_children) / job_minutes : 0.0;
  }
};

// The command line of a watcher process, optionally as `user`, stdout to `output`.
std::string WatchCommand(const std::string& self, const std::string& user, const WatchArgs& args,
                         const std::string& output) {
  std::string command = user.empty() ? "" : "runuser -u " + user + " -- ";
  command += ShellQuote(self) + " --watch " + args.mode + " --list " + ShellQuote(args.list);
  if (args.rounds > 0) command += " --rounds " + std::to_string(args.rounds);
  if (!args.ssh_config.empty()) command += " --ssh-config " + ShellQuote(args.ssh_config);
  return command + " >" + ShellQuote(output);
}

void WriteList(const std::string& path, const std::vector<JobTimes>& jobs,
               const std::string& local_dir = "") {
  std::ofstream list(path);
  list << "token " << BenchEndToken() << "\n";
  for (const JobTimes& job : jobs) {
    list << job.id << " " << job.out;
    if (!local_dir.empty())
      list << " " << local_dir << "/" << fs::path(job.out).filename().string();
    list << "\n";
  }
}

// Reads a watcher's output file into `m` (verdicts, usage, ssh counts).
void ReadWatchOutput(const std::string& path, Measure* m) {
  std::map<std::string, JobTimes*> by_id;
  for (JobTimes& job : m->jobs) by_id[job.id] = &job;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "verdict") {
      std::string id, status;
      double when = 0;
      words >> id >> status >> when;
      if (by_id.count(id)) {
        by_id[id]->status = status;
        by_id[id]->verdict = when;
      }
    } else if (tag == "usage") {
      words >> m->cpu_self >> m->cpu_children >> m->hwm_kb >> m->wall >> m->rounds;
    } else if (tag == "ssh") {
      words >> m->ssh_connections >> m->ssh_commands;
    } else if (tag == "client") {
      m->client_line = line;
    }
  }
}

// Job run times from the jobs' own lines, and the delays to the verdicts.
void Summarize(Measure* m) {
  std::vector<double> delays;
  m->job_minutes = 0;
  m->not_passed = 0;
  for (JobTimes& job : m->jobs) {
    std::ifstream log(job.out);
    for (std::string line; std::getline(log, line);) {
      if (line.rfind("[bench] start ", 0) == 0) job.start = std::atof(line.c_str() + 14);
      if (line.rfind("[bench] end ", 0) == 0) job.end = std::atof(line.c_str() + 12);
    }
    if (job.status != "PASSED") ++m->not_passed;
    if (job.start > 0 && job.end > job.start) m->job_minutes += (job.end - job.start) / 60.0;
    if (job.end > 0 && job.verdict > 0) delays.push_back(job.verdict - job.end);
  }
  m->median_delay = Quantile(delays);
  m->p90_delay = Quantile(delays, 0.9);
  m->max_delay = delays.empty() ? 0 : *std::max_element(delays.begin(), delays.end());
}

// The end-marker token of every benchmark job's script (slurm_records.h).
const std::string& BenchEndToken() {
  if (g_end_token.empty()) g_end_token = NewEndMarkerToken();
  return g_end_token;
}

std::string JobScript(const std::string& dir, int seconds) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --output=" + dir + "/bench_%j.out\n";
  s += "#SBATCH --error=" + dir + "/bench_%j.err\n";
  s += "echo \"[bench] start $(date +%s.%N)\"\n";
  s += "srun -l sleep " + std::to_string(seconds) + "\n";
  s += "exit_code=$?\n";
  s += "echo \"[bench] end $(date +%s.%N)\"\n";
  s += EndMarkerEcho(BenchEndToken()) + "\n";
  s += "exit $exit_code\n";
  return s;
}

// sbatch options of every benchmark job: the run's name, small requests, a low priority
// (--nice) so that other users' jobs on the shared cluster go first.
std::string SbatchOptions(const std::string& partition) {
  std::string options =
      std::string("--parsable --job-name=") + g_tag + " --nice=1000 --time=10 --ntasks=1 --mem=64M";
  if (!partition.empty()) options += " --partition=" + ShellQuote(partition);
  return options;
}

// Submits `count` copies of `script` (4 sbatch at a time); returns the job ids.
std::vector<std::string> SubmitMany(int count, const std::string& script,
                                    const std::string& options) {
  std::string command = "seq " + std::to_string(count) + " | xargs -P 4 -I{} sbatch " + options +
                        " " + ShellQuote(script) + " 2>&1";
  std::string output = Shell(command);
  std::vector<std::string> ids;
  for (const std::string& line : Split(output, '\n')) {
    std::string id = line.substr(0, line.find(';'));
    if (id.empty() ||
        !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      Fail("sbatch: " + line);
    }
    ids.push_back(id);
  }
  if (static_cast<int>(ids.size()) != count) Fail("sbatch submitted fewer jobs than asked");
  return ids;
}

struct Config {
  std::string self, dir, partition;
  int seconds = 5;
  bool naive = true;
  bool isolate = false;  // per-user RPC tables (root)
  bool together = true;  // both watchers on the same jobs at once (needs isolate)
};

// One size: `jobs` jobs submitted at once and watched to a verdict by trtllm-run's watcher
// and the naive one (at the same time on the same jobs, or one after the other).
std::pair<Measure, Measure> RunSize(const Config& config, int jobs) {
  std::string dir = config.dir + "/size_" + std::to_string(jobs);
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0777);
  std::string script = dir + "/bench.sh";
  std::ofstream(script) << JobScript(dir, config.seconds);

  auto submit = [&](Measure* m) {
    std::vector<std::string> ids = SubmitMany(jobs, script, SbatchOptions(config.partition));
    for (const std::string& id : ids) {
      JobTimes times;
      times.id = id;
      times.out = dir + "/bench_" + id + ".out";
      m->jobs.push_back(times);
    }
  };
  // Runs the watchers of `modes` at once on `m`'s jobs; fills in RPCs and their output.
  auto watch = [&](std::vector<Measure*> ms) {
    std::string list = dir + "/" + ms[0]->name + ".list";
    WriteList(list, ms[0]->jobs);
    RpcCounts ctld_before = Controller(), dbd_before = Dbd();
    std::string command;
    for (Measure* m : ms) {
      WatchArgs args;
      args.mode = m->name;
      args.list = list;
      std::string user = !config.isolate ? "" : m->name == "ours" ? kWatchUser : kNaiveUser;
      command += WatchCommand(config.self, user, args, dir + "/" + m->name + ".watch") + " & ";
    }
    Shell(command + "wait");
    RpcCounts ctld_after = Controller(), dbd_after = Dbd();
    for (Measure* m : ms) {
      if (config.isolate) {
        std::string user = m->name == "ours" ? kWatchUser : kNaiveUser;
        auto mine = [&](const std::string& name) { return name == user; };
        m->ctld_queries = Delta(ctld_before.by_user, ctld_after.by_user, mine);
        m->dbd_queries = Delta(dbd_before.by_user, dbd_after.by_user, mine);
      } else {
        m->ctld_queries = Delta(ctld_before.by_type, ctld_after.by_type, IsControllerQuery);
        m->dbd_queries = Delta(dbd_before.by_type, dbd_after.by_type, IsDbdQuery);
      }
      ReadWatchOutput(dir + "/" + m->name + ".watch", m);
      Summarize(m);
    }
  };

  Measure ours, naive;
  ours.name = "ours";
  naive.name = "naive";
  if (config.naive && config.together) {
    submit(&ours);
    naive.jobs = ours.jobs;
    watch({&ours, &naive});
  } else {
    submit(&ours);
    watch({&ours});
    if (config.naive) {
      submit(&naive);
      watch({&naive});
    }
  }
  return {ours, naive};
}

// RSS while watching `jobs` held jobs for `rounds` query rounds: trtllm-run's watcher, the
// same process with no jobs, and the naive poller for one round.
struct RssMeasure {
  Measure ours, idle, naive;
  double submit_seconds = 0;
};

// Fails unless the cluster can queue `jobs` more jobs: MaxJobCount less the jobs it holds
// now (every user's, finished ones within MinJobAge too), and the submitting user's
// MaxSubmitJobs/GrpSubmitJobs association limits.
void CheckQueueRoom(int jobs) {
  std::string config = Shell("scontrol show config 2>/dev/null");
  std::size_t at = config.find("MaxJobCount");
  long max_jobs = 0;
  if (at != std::string::npos) max_jobs = std::atol(config.c_str() + config.find('=', at) + 1);
  long held = std::atol(Shell("squeue -h -t all -o %i 2>/dev/null | wc -l").c_str());
  if (max_jobs > 0 && held + jobs > max_jobs) {
    Fail("the cluster's MaxJobCount is " + std::to_string(max_jobs) + " and it holds " +
         std::to_string(held) + " jobs: no room for " + std::to_string(jobs) +
         " more (use a smaller --rss-jobs, or wait for the queue to drain)");
  }
  for (const std::string& limit :
       Split(Shell("sacctmgr -n -P show assoc where user=$(id -un) format=MaxSubmit,GrpSubmit "
                   "2>/dev/null | tr '|' '\\n'"),
             '\n')) {
    if (std::atol(limit.c_str()) > 0 && std::atol(limit.c_str()) < jobs) {
      Fail("an association limit allows " + limit + " submitted jobs, fewer than --rss-jobs " +
           std::to_string(jobs));
    }
  }
}

RssMeasure RunRss(const Config& config, int jobs, int rounds) {
  RssMeasure r;
  CheckQueueRoom(jobs);
  std::string dir = config.dir + "/rss";
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0777);
  std::string script = dir + "/held.sh";
  std::ofstream(script) << JobScript(dir, 1);
  double started = Epoch();
  std::vector<std::string> ids =
      SubmitMany(jobs, script, SbatchOptions(config.partition) + " --hold");
  r.submit_seconds = Epoch() - started;
  for (const std::string& id : ids) {
    JobTimes times;
    times.id = id;
    times.out = dir + "/bench_" + id + ".out";
    r.ours.jobs.push_back(times);
  }
  std::string list = dir + "/held.list", empty = dir + "/empty.list";
  WriteList(list, r.ours.jobs);
  std::ofstream(empty).close();
  auto run = [&](Measure* m, const std::string& mode, const std::string& jobs_list, int n) {
    WatchArgs args;
    args.mode = mode;
    args.list = jobs_list;
    args.rounds = n;
    std::string user = config.isolate ? kWatchUser : "";
    std::string output = dir + "/" + mode + std::to_string(n) + ".watch";
    Shell(WatchCommand(config.self, user, args, output));
    ReadWatchOutput(output, m);
  };
  run(&r.ours, "ours", list, rounds);
  run(&r.idle, "ours", empty, 0);
  if (config.naive) run(&r.naive, "naive", list, 1);
  CancelOurJobs();
  return r;
}

// Remote: `jobs` jobs submitted over SSH (user sshtest through the loopback sshd) and
// watched by trtllm-run's watcher over one SSH master, then the same number by the naive
// remote poller (a new `ssh HOST squeue -j ID` per job per second).
struct RemoteMeasure {
  Measure ours, copy, naive, master;  // copy: trtllm-run without the output stream
  int run_connections = 0, run_accepted = 0;
  std::string run_status;
  int accepted_ours = 0, accepted_naive = 0, accepted_master = 0;  // sshd's "Accepted" lines
};

int SshdAccepted() {
  return std::atoi(
      Shell(std::string("grep -c 'Accepted publickey for sshtest' ") + kSshDir + "/sshd.log")
          .c_str());
}

std::string WriteSshConfig(const std::string& dir) {
  std::string config = dir + "/ssh_config";
  std::ofstream(config) << "Host " << kSshHost << "\n  HostName 127.0.0.1\n  Port 2222\n"
                        << "  User sshtest\n  IdentityFile " << kSshDir << "/id_ed25519\n"
                        << "  IdentitiesOnly yes\n  UserKnownHostsFile " << kSshDir
                        << "/known_hosts\n";
  return config;
}

// One remote_slurm run through the loopback sshd: how many SSH connections it opened (the
// client's count and sshd's "Accepted" lines).
void RemoteRun(const std::string& dir, RemoteMeasure* r) {
  std::string work = dir + "/remote_run";
  fs::create_directories(work);
  JobSpec spec;
  spec.scenario = "remote_slurm";
  spec.workflow_type = "custom";
  spec.model_name = "bench";
  spec.work_dir = work;
  spec.ssh_host = kSshHost;
  spec.extra["ssh_config_file"] = WriteSshConfig(work);
  spec.remote_work_dir = "/home/sshtest/trtllm_bench_" + std::to_string(::getpid());
  spec.script_name = "bench_remote.sh";
  spec.script_path = work + "/bench_remote.sh";
  spec.build_project = false;
  std::ofstream(spec.script_path) << "#!/bin/bash\n#SBATCH --output=" << spec.remote_work_dir
                                  << "/bench_remote_%j.out\n#SBATCH --time=5\n"
                                  << "#SBATCH --job-name=" << g_tag << "\n"
                                  << "srun -l bash -c 'for i in 1 2 3 4 5; do echo tick $i; "
                                     "sleep 1; done'\n"
                                  << "exit_code=$?\n"
                                  << EndMarkerEcho(NewEndMarkerToken()) << "\n";
  int before = SshdAccepted();
  ExecContext context;
  RunResult result = ExecuteSlurmJob(spec, context);
  r->run_accepted = SshdAccepted() - before;
  r->run_connections = std::atoi(result.details["ssh_connections"].c_str());
  r->run_status = RunStatusName(result.status);
  Shell("rm -rf " + ShellQuote(spec.remote_work_dir));
}

RemoteMeasure RunRemote(const Config& config, int jobs) {
  RemoteMeasure r;
  std::string dir = config.dir + "/remote";
  fs::create_directories(dir);
  std::string ssh_config = WriteSshConfig(dir);
  std::string remote_dir = "/home/sshtest/trtllm_bench_watch_" + std::to_string(::getpid());
  std::string ssh = "ssh -F " + ShellQuote(ssh_config) + " -o BatchMode=yes " + kSshHost + " ";
  // The jobs' script, written and submitted over one SSH connection (not counted: the
  // watchers' costs start once the jobs are queued).
  std::string script = remote_dir + "/bench.sh";
  std::string setup = "mkdir -p " + ShellQuote(remote_dir) + " && cat >" + ShellQuote(script);
  {
    std::string local_script = dir + "/bench.sh";
    std::ofstream(local_script) << JobScript(remote_dir, config.seconds);
    int status = 0;
    Shell(ssh + ShellQuote(setup) + " <" + ShellQuote(local_script), &status);
    if (status != 0) Fail("cannot write the remote job script over ssh");
  }
  auto submit = [&](Measure* m) {
    std::string remote = "for i in $(seq " + std::to_string(jobs) + "); do sbatch " +
                         SbatchOptions(config.partition) + " " + ShellQuote(script) +
                         " || exit 1; done";
    int status = 0;
    std::string out = Shell(ssh + ShellQuote(remote) + " 2>&1", &status);
    if (status != 0) Fail("remote sbatch failed: " + out);
    for (const std::string& line : Split(out, '\n')) {
      JobTimes times;
      times.id = line.substr(0, line.find(';'));
      times.out = remote_dir + "/bench_" + times.id + ".out";  // readable here (root)
      m->jobs.push_back(times);
    }
  };
  auto watch = [&](Measure* m, const std::string& mode, int* accepted) {
    std::string local_copies = dir + "/" + mode;
    fs::create_directories(local_copies);
    std::string list = dir + "/" + mode + ".list";
    WriteList(list, m->jobs, local_copies);
    WatchArgs args;
    args.mode = mode;
    args.list = list;
    args.ssh_config = ssh_config;
    int before = SshdAccepted();
    Shell(WatchCommand(config.self, "", args, dir + "/" + mode + ".watch"));
    *accepted = SshdAccepted() - before;
    ReadWatchOutput(dir + "/" + mode + ".watch", m);
    Summarize(m);
  };
  r.ours.name = "ours-remote";
  submit(&r.ours);
  watch(&r.ours, "ours-remote", &r.accepted_ours);
  if (config.naive) {
    int accepted = 0;
    r.copy.name = "ours-remote-copy";
    submit(&r.copy);
    watch(&r.copy, "ours-remote-copy", &accepted);
    r.naive.name = "naive-remote";
    submit(&r.naive);
    watch(&r.naive, "naive-remote", &r.accepted_naive);
    r.master.name = "naive-master";
    submit(&r.master);
    watch(&r.master, "naive-master", &r.accepted_master);
  }
  Shell(ssh + ShellQuote("rm -rf " + ShellQuote(remote_dir)));
  RemoteRun(config.dir, &r);
  return r;
}

// ------------------------------------------------------------------ the report

struct Table {
  bool all_met = true;
  void Header(const std::string& baseline) {
    std::cout << std::left << std::setw(44) << "metric" << std::setw(10) << "target"
              << std::setw(20) << "trtllm-run" << baseline << "\n";
  }
  // A row; `met` is empty for rows without a target.
  void Row(const std::string& name, const std::string& target, const std::string& ours,
           const std::string& baseline, const std::string& met = "") {
    std::string shown = ours + (met.empty() ? "" : " " + met);
    std::cout << std::left << std::setw(44) << name << std::setw(10) << target << std::setw(20)
              << shown << baseline << "\n";
  }
  std::string Check(bool ok) {
    if (!ok) all_met = false;
    return ok ? "PASS" : "MISS";
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {50, 200};
  int remote_jobs = 8, rss_jobs = 1000, rss_rounds = 3, rss_target_mb = 50;
  Config config;
  config.seconds = 5;
  config.partition = "batch,cpu";
  bool remote = false, check = false, smoke = false, separate = false;
  WatchArgs watch;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "slurm_watch_bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&]() {
      std::string value = next();
      char* end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 0 || n > 100000) {
        std::cerr << "slurm_watch_bench: " << arg << " " << value
                  << ": expected a whole number from 0 to 100000\n";
        std::exit(2);
      }
      return static_cast<int>(n);
    };
    if (arg == "--sizes" || arg == "--jobs") {
      sizes.clear();
      std::string value = next();
      for (const std::string& size : Split(value == "none" ? "" : value, ',')) {
        char* end = nullptr;
        long n = std::strtol(size.c_str(), &end, 10);
        if (*end != '\0' || n < 1 || n > 100000) {
          std::cerr << "slurm_watch_bench: " << arg << ": \"" << size
                    << "\" is not a job count (1 to 100000; a comma-separated list, or none)\n";
          return 2;
        }
        sizes.push_back(static_cast<int>(n));
      }
    } else if (arg == "--seconds") {
      config.seconds = number();
    } else if (arg == "--partition") {
      config.partition = next();
    } else if (arg == "--remote") {
      remote = true;
    } else if (arg == "--remote-jobs") {
      remote_jobs = number();
    } else if (arg == "--rss-jobs") {
      rss_jobs = number();
    } else if (arg == "--rss-rounds") {
      rss_rounds = number();
    } else if (arg == "--rss-target-mb") {
      rss_target_mb = number();
    } else if (arg == "--separate") {
      separate = true;
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--smoke") {
      smoke = true;
    } else if (arg == "--no-naive") {
      config.naive = false;
    } else if (arg == "--watch") {
      watch.mode = next();
    } else if (arg == "--list") {
      watch.list = next();
    } else if (arg == "--rounds") {
      watch.rounds = number();
    } else if (arg == "--ssh-config") {
      watch.ssh_config = next();
    } else {
      std::cerr << "usage: slurm_watch_bench [--sizes 50,200] [--seconds 5] [--partition P] "
                   "[--separate] [--remote] [--remote-jobs 8] [--rss-jobs 1000] "
                   "[--rss-rounds 3] [--rss-target-mb 50] [--no-naive] [--check] [--smoke]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (!watch.mode.empty()) return WatchMain(watch);
  if (smoke) {
    // CI's brief run: 10 jobs of 3 s, 2 remote jobs, RSS for 100 held jobs, no baseline;
    // fails on a wrong or late verdict, a second SSH connection or RSS over the target
    // (RPCs per job-minute mean little for half a job-minute: the first queries dominate).
    sizes = {10};
    config.seconds = 3;
    config.naive = false;
    remote = true;
    remote_jobs = 2;
    rss_jobs = 100;
    rss_rounds = 2;
  }
  if (config.seconds < 1 || rss_rounds < 1) {
    std::cerr << "slurm_watch_bench: --seconds and --rss-rounds must be positive\n";
    return 2;
  }
  InstallCleanup();
  config.self = fs::canonical("/proc/self/exe").string();
  config.isolate = ::geteuid() == 0 && EnsureUser(kWatchUser) && EnsureUser(kNaiveUser);
  config.together = config.isolate && !separate;
  char templ[] = "/tmp/trtllm_bench_XXXXXX";
  config.dir = ::mkdtemp(templ);
  ::chmod(config.dir.c_str(), 0755);
  std::cerr << "slurm_watch_bench: jobs named " << g_tag << " in " << config.dir
            << (config.isolate
                    ? "; watchers run as users " + std::string(kWatchUser) + " and " + kNaiveUser
                    : "; RPCs by message type (not isolated from other users)")
            << "\n";

  Table table;
  std::cout << std::fixed << std::setprecision(2);
  std::string naive_header = config.naive ? "naive (1 squeue/job/s)" : "naive: not run";
  bool basics = true;  // what the smoke run checks
  for (int jobs : sizes) {
    std::cerr << "slurm_watch_bench: " << jobs << " jobs of " << config.seconds << " s...\n";
    auto [ours, naive] = RunSize(config, jobs);
    bool n = config.naive;
    std::cout << "\n== " << jobs << " concurrent jobs of " << config.seconds << " s, partition "
              << (config.partition.empty() ? "(default)" : config.partition) << "; "
              << (!n                ? "trtllm-run's watcher only"
                  : config.together ? "both watchers at once on the same jobs"
                                    : "one watcher after the other")
              << "\n";
    std::cout << "   scheduler RPCs counted "
              << (config.isolate ? "for each watcher's own user" : "by message type")
              << " (slurmctld: sdiag, slurmdbd: sacctmgr show stats)\n";
    table.Header(naive_header);
    table.Row("query RPCs per job-minute", "<= 2", Num(ours.QueriesPerJobMinute()),
              n ? Num(naive.QueriesPerJobMinute()) : "-",
              smoke ? "" : table.Check(ours.QueriesPerJobMinute() <= 2.0));
    table.Row(
        "  slurmctld / slurmdbd query RPCs", "",
        std::to_string(ours.ctld_queries) + " / " + std::to_string(ours.dbd_queries),
        n ? std::to_string(naive.ctld_queries) + " / " + std::to_string(naive.dbd_queries) : "-");
    table.Row("  job-minutes (sum of job run times)", "", Num(ours.job_minutes),
              n ? Num(naive.job_minutes) : "-");
    // A clean end is final once the controller confirms it, and bulk confirmations are paced
    // by the query budget: a 5 s job earns a tenth of one, so its verdict waits for the
    // next query the budget allows, at most max_confirm_wait (30 s) after the previous one.
    table.Row("median delay job end -> verdict (s)", "", Num(ours.median_delay),
              n ? Num(naive.median_delay) : "-");
    table.Row("p90 delay (s)", "<= " + Num(kBulkDelayTarget, 0), Num(ours.p90_delay),
              n ? Num(naive.p90_delay) : "-", table.Check(ours.p90_delay <= kBulkDelayTarget));
    table.Row("  max delay (s)", "", Num(ours.max_delay), n ? Num(naive.max_delay) : "-");
    table.Row("watcher CPU s (own + its commands)", "",
              Num(ours.cpu_self) + " + " + Num(ours.cpu_children),
              n ? Num(naive.cpu_self) + " + " + Num(naive.cpu_children) : "-");
    table.Row("  CPU ms per job-minute", "", Num(ours.CpuPerJobMinuteMs(), 0),
              n ? Num(naive.CpuPerJobMinuteMs(), 0) : "-");
    table.Row("  watch wall time (s)", "", Num(ours.wall, 1), n ? Num(naive.wall, 1) : "-");
    table.Row("  jobs not PASSED", "0", std::to_string(ours.not_passed),
              n ? std::to_string(naive.not_passed) : "-", table.Check(ours.not_passed == 0));
    basics = basics && ours.p90_delay <= kBulkDelayTarget && ours.not_passed == 0;
  }

  if (remote && remote_jobs > 0) {
    std::cerr << "slurm_watch_bench: remote watch of " << remote_jobs << " jobs...\n";
    RemoteMeasure r = RunRemote(config, remote_jobs);
    bool n = config.naive;
    auto per_jm = [](double count, const Measure& m) {
      return m.job_minutes > 0 ? count / m.job_minutes : 0.0;
    };
    std::cout << "\n== remote watch over SSH (loopback sshd, user sshtest): " << remote_jobs
              << " jobs of " << config.seconds << " s per watcher\n";
    // Two baselines side by side: a new connection per query, and one master.
    auto both = [&](const std::function<std::string(const Measure&)>& f) -> std::string {
      if (!n) return "-";
      std::ostringstream out;
      out << std::left << std::setw(24) << f(r.naive) << f(r.master);
      return out.str();
    };
    table.Header(n ? "naive, 1 squeue/job/s: new ssh each | over one master" : "naive: not run");
    table.Row(
        "SSH connections opened per watch", "1",
        std::to_string(r.ours.ssh_connections) + " (sshd: " + std::to_string(r.accepted_ours) + ")",
        both([&](const Measure& m) {
          return std::to_string(m.ssh_connections) + " (sshd: " +
                 std::to_string(&m == &r.naive ? r.accepted_naive : r.accepted_master) + ")";
        }),
        table.Check(r.ours.ssh_connections == 1));
    table.Row("  SSH connections per job-minute", "", Num(per_jm(r.ours.ssh_connections, r.ours)),
              both([&](const Measure& m) { return Num(per_jm(m.ssh_connections, m)); }));
    double round_trips = per_jm(r.ours.ssh_commands, r.ours);
    double master_round_trips = per_jm(r.master.ssh_commands, r.master);
    table.Row("round trips (commands) per job-minute", n ? "<= naive" : "", Num(round_trips),
              both([&](const Measure& m) { return Num(per_jm(m.ssh_commands, m)); }),
              n ? table.Check(round_trips <= master_round_trips) : "");
    table.Row("  commands / job-minutes", "",
              std::to_string(r.ours.ssh_commands) + " / " + Num(r.ours.job_minutes),
              both([&](const Measure& m) {
                return std::to_string(m.ssh_commands) + " / " + Num(m.job_minutes);
              }));
    table.Row("median delay job end -> verdict (s)", "<= 1", Num(r.ours.median_delay),
              both([&](const Measure& m) { return Num(m.median_delay); }),
              table.Check(r.ours.median_delay <= 1.0));
    table.Row("p90 delay (s)", "<= 1.5", Num(r.ours.p90_delay),
              both([&](const Measure& m) { return Num(m.p90_delay); }),
              table.Check(r.ours.p90_delay <= 1.5));
    table.Row("  max delay (s)", "", Num(r.ours.max_delay),
              both([&](const Measure& m) { return Num(m.max_delay); }));
    table.Row("watcher CPU s (own + its commands)", "",
              Num(r.ours.cpu_self) + " + " + Num(r.ours.cpu_children), both([&](const Measure& m) {
                return Num(m.cpu_self) + " + " + Num(m.cpu_children);
              }));
    table.Row("  watch wall time (s)", "", Num(r.ours.wall, 1),
              both([&](const Measure& m) { return Num(m.wall, 1); }));
    table.Row("  jobs not PASSED", "0", std::to_string(r.ours.not_passed),
              both([&](const Measure& m) { return std::to_string(m.not_passed); }),
              table.Check(r.ours.not_passed == 0));
    if (n) {
      // The same watcher without the output stream: a `tail -c` copy per second.
      table.Row("trtllm-run without the stream (tail -c/s)", "", "", "");
      table.Row("  median / p90 delay (s)", "",
                Num(r.copy.median_delay) + " / " + Num(r.copy.p90_delay), "-");
      table.Row("  round trips per job-minute", "", Num(per_jm(r.copy.ssh_commands, r.copy)), "-");
      table.Row("  commands / job-minutes, wall (s)", "",
                std::to_string(r.copy.ssh_commands) + " / " + Num(r.copy.job_minutes) + ", " +
                    Num(r.copy.wall, 1),
                "-");
    }
    table.Row("SSH connections per remote_slurm run", "1",
              std::to_string(r.run_connections) + " (sshd: " + std::to_string(r.run_accepted) + ")",
              "-", table.Check(r.run_connections == 1));
    table.Row("  remote_slurm run verdict", "PASSED", r.run_status, "-",
              table.Check(r.run_status == "PASSED"));
    basics = basics && r.ours.ssh_connections == 1 && r.ours.not_passed == 0 &&
             r.run_connections == 1 && r.run_status == "PASSED";
  }

  if (rss_jobs > 0) {
    std::cerr << "slurm_watch_bench: RSS while watching " << rss_jobs << " held jobs...\n";
    RssMeasure r = RunRss(config, rss_jobs, rss_rounds);
    double mb = r.ours.hwm_kb / 1024.0;
    double per_job = (r.ours.hwm_kb - r.idle.hwm_kb) * 1024.0 / rss_jobs;
    std::cout << "\n== memory while watching " << rss_jobs << " held (pending) jobs for "
              << r.ours.rounds << " query rounds (submitted in " << Num(r.submit_seconds, 1)
              << " s)\n";
    table.Header("baselines");
    table.Row("watcher peak RSS (VmHWM, MB)", "<= " + std::to_string(rss_target_mb), Num(mb, 1),
              "same process, no jobs: " + Num(r.idle.hwm_kb / 1024.0, 1) +
                  (config.naive ? "; naive, 1 round: " + Num(r.naive.hwm_kb / 1024.0, 1) : ""),
              table.Check(mb <= rss_target_mb));
    table.Row("  bytes per watched job (over no jobs)", "", Num(per_job, 0), "");
    table.Row("  CPU s per query round (own + commands)", "",
              Num((r.ours.cpu_self + r.ours.cpu_children) / std::max(1, r.ours.rounds), 3),
              config.naive ? "naive, 1 round of " + std::to_string(rss_jobs) +
                                 " squeue: " + Num(r.naive.cpu_self + r.naive.cpu_children, 3)
                           : "");
    table.Row("  watch wall time (s)", "", Num(r.ours.wall, 1),
              config.naive ? "naive, 1 round: " + Num(r.naive.wall, 1) : "");
    basics = basics && mb <= rss_target_mb;
  }

  CancelOurJobs();
  std::cout << "\nresult: "
            << (table.all_met     ? "targets met"
                : smoke && basics ? "smoke run passed"
                                  : "TARGETS MISSED")
            << "\n";
  fs::remove_all(config.dir);
  if (smoke) return basics ? 0 : 1;
  return check && !table.all_met ? 1 : 0;
}
