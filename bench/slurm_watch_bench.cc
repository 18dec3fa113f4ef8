// slurm_watch_bench: what watching many Slurm jobs costs the scheduler, and how soon a
// verdict follows a job's end, for trtllm-run's SlurmWatcher against a naive watcher (one
// `squeue` per job per second) in the same run. See bench/README.md.
//
//   slurm_watch_bench [--jobs 50] [--seconds 5] [--partition P] [--remote] [--check]
//   slurm_watch_bench --smoke      (CI: 10 jobs of 3 s, no baseline, fails on a wrong verdict)
//
// Scheduler RPCs are read from the daemons themselves: slurmctld's `sdiag` and slurmdbd's
// `sacctmgr show stats`, as deltas over each watcher's run. Run as root, each watcher runs
// as its own unprivileged user (created if missing) so that its RPCs are counted apart
// from everything else the cluster serves (the per-user tables); otherwise the
// per-message-type deltas of the query RPCs are used, which other users of the cluster
// inflate.
#include <signal.h>
#include <stdio.h>
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
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "trtllm_run/slurm_job.h"
#include "trtllm_run/slurm_run.h"
#include "trtllm_run/slurm_watch.h"
#include "trtllm_run/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

const char kWatchUser[] = "trtllm-bench";

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

struct JobTimes {
  std::string id;
  std::string out;
  double start = 0, end = 0;  // the job's own clock (this host)
  double verdict = 0;         // when the watcher had its verdict
  std::string status;
};

struct Phase {
  std::string name;
  std::vector<JobTimes> jobs;
  long ctld_queries = 0;  // attributed to the watcher
  long dbd_queries = 0;
  bool per_user = false;
  double job_minutes = 0;
  double median_delay = 0, p90_delay = 0, max_delay = 0;
  double wall = 0;
  int not_passed = 0;
};

std::string Script(const std::string& dir, int index, int seconds, const std::string& partition) {
  std::string name = "bench_" + std::to_string(index);
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + name + "\n";
  s += "#SBATCH --output=" + dir + "/" + name + "_%j.out\n";
  s += "#SBATCH --error=" + dir + "/" + name + "_%j.err\n";
  s += "#SBATCH --time=10\n#SBATCH --ntasks=1\n";
  if (!partition.empty()) s += "#SBATCH --partition=" + partition + "\n";
  s += "echo \"[bench] start $(date +%s.%N)\"\n";
  s += "srun -l sleep " + std::to_string(seconds) + "\n";
  s += "code=$?\n";
  s += "echo \"[bench] end $(date +%s.%N)\"\n";
  s += "echo \"[trtllm-run] job finished with exit code $code\"\n";
  s += "exit $code\n";
  return s;
}

// --watch ours|naive --ids a,b --outs x,y : the watcher process. Prints one line per
// verdict: "verdict <id> <STATUS> <epoch>".
int WatchMain(const std::string& mode, const std::vector<std::string>& ids,
              const std::vector<std::string>& outs) {
  std::unique_ptr<Scenario> scenario = MakeLocalScenario();
  if (mode == "ours") {
    SlurmClient client(scenario.get());
    SlurmWatchOptions options;
    options.confirm_clean_end = false;  // bulk mode: the end line is the end
    SlurmWatcher watcher(&client, options);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      SlurmWatchJob job;
      job.job_id = ids[i];
      job.out_path = job.local_out = outs[i];
      std::string err = outs[i].substr(0, outs[i].size() - 4) + ".err";
      job.err_path = job.local_err = err;
      job.scenario = "bench";
      watcher.Add(job);
    }
    watcher.Run(nullptr, [](SlurmVerdict verdict) {
      std::printf("verdict %s %s %.6f\n", verdict.job_id.c_str(),
                  RunStatusName(verdict.result.status), Epoch());
      std::fflush(stdout);
    });
    const SlurmClientStats& stats = client.stats();
    std::printf("client controller_queries=%d accounting_queries=%d config_queries=%d\n",
                stats.controller_queries, stats.accounting_queries, stats.config_queries);
    return 0;
  }
  // The naive watcher: every second, one squeue per job still watched.
  std::vector<bool> done(ids.size(), false);
  std::size_t left = ids.size();
  int queries = 0;
  while (left > 0) {
    auto round = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (done[i]) continue;
      Result<CommandOutput> out =
          scenario->Run({"squeue", "-h", "-t", "all", "-j", ids[i], "-o", "%T"}, "");
      ++queries;
      if (!out.ok()) continue;
      std::string state = NormalizeSlurmState(out->stdout_text);
      bool gone = out->exit_code != 0 && IsInvalidJobIdError(out->stderr_text);
      if (IsTerminalSlurmState(state) || gone) {
        done[i] = true;
        --left;
        std::printf("verdict %s %s %.6f\n", ids[i].c_str(),
                    state == "COMPLETED" ? "PASSED" : state.c_str(), Epoch());
        std::fflush(stdout);
      }
    }
    std::this_thread::sleep_until(round + std::chrono::seconds(1));
  }
  std::printf("client squeue_calls=%d\n", queries);
  return 0;
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

double Median(std::vector<double> values, double quantile = 0.5) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t index = static_cast<std::size_t>(std::round(quantile * (values.size() - 1)));
  return values[index];
}

bool EnsureWatchUser() {
  int status = 0;
  Shell(std::string("id -u ") + kWatchUser + " >/dev/null 2>&1", &status);
  if (status == 0) return true;
  Shell(std::string("useradd -r -M -s /usr/sbin/nologin ") + kWatchUser + " >/dev/null 2>&1",
        &status);
  return status == 0;
}

Phase RunPhase(const std::string& mode, const std::string& self, const std::string& dir, int jobs,
               int seconds, const std::string& partition, bool isolate) {
  Phase phase;
  phase.name = mode;
  std::unique_ptr<Scenario> scenario = MakeLocalScenario();
  SlurmClient client(scenario.get());
  std::string phase_dir = dir + "/" + mode;
  fs::create_directories(phase_dir);
  ::chmod(phase_dir.c_str(), 0777);
  for (int i = 0; i < jobs; ++i) {
    std::string script = phase_dir + "/bench_" + std::to_string(i) + ".sh";
    std::ofstream(script) << Script(phase_dir, i, seconds, partition);
    Result<std::string> id = client.Submit(script, phase_dir);
    if (!id.ok()) {
      std::cerr << "slurm_watch_bench: " << id.status().ToString() << "\n";
      std::exit(3);
    }
    JobTimes times;
    times.id = id.value();
    times.out = phase_dir + "/bench_" + std::to_string(i) + "_" + times.id + ".out";
    phase.jobs.push_back(times);
  }
  std::string ids, outs;
  for (const JobTimes& job : phase.jobs) {
    ids += (ids.empty() ? "" : ",") + job.id;
    outs += (outs.empty() ? "" : ",") + job.out;
  }
  RpcCounts ctld_before = Controller(), dbd_before = Dbd();
  double started = Epoch();
  std::string command = (isolate ? std::string("runuser -u ") + kWatchUser + " -- " : "") + self +
                        " --watch " + mode + " --ids " + ids + " --outs " + outs;
  std::string output = Shell(command);
  phase.wall = Epoch() - started;
  RpcCounts ctld_after = Controller(), dbd_after = Dbd();
  if (isolate) {
    phase.per_user = true;
    auto user = [](const std::string& name) { return name == kWatchUser; };
    phase.ctld_queries = Delta(ctld_before.by_user, ctld_after.by_user, user);
    phase.dbd_queries = Delta(dbd_before.by_user, dbd_after.by_user, user);
  } else {
    phase.ctld_queries = Delta(ctld_before.by_type, ctld_after.by_type, IsControllerQuery);
    phase.dbd_queries = Delta(dbd_before.by_type, dbd_after.by_type, IsDbdQuery);
  }
  std::map<std::string, JobTimes*> by_id;
  for (JobTimes& job : phase.jobs) by_id[job.id] = &job;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag, id, status;
    double when = 0;
    words >> tag >> id >> status >> when;
    if (tag == "verdict" && by_id.count(id)) {
      by_id[id]->status = status;
      by_id[id]->verdict = when;
    } else if (tag == "client") {
      std::cerr << "  [" << mode << "] " << line << "\n";
    }
  }
  std::vector<double> delays;
  for (JobTimes& job : phase.jobs) {
    std::ifstream log(job.out);
    for (std::string line; std::getline(log, line);) {
      if (line.rfind("[bench] start ", 0) == 0) job.start = std::atof(line.c_str() + 14);
      if (line.rfind("[bench] end ", 0) == 0) job.end = std::atof(line.c_str() + 12);
    }
    if (job.status != "PASSED") ++phase.not_passed;
    if (job.start > 0 && job.end > job.start) phase.job_minutes += (job.end - job.start) / 60.0;
    if (job.end > 0 && job.verdict > 0) delays.push_back(job.verdict - job.end);
  }
  phase.median_delay = Median(delays);
  phase.p90_delay = Median(delays, 0.9);
  phase.max_delay = delays.empty() ? 0 : *std::max_element(delays.begin(), delays.end());
  return phase;
}

// One remote_slurm run through the loopback sshd (tests/services/sshd.sh): how many SSH
// connections it opened (the client's count and sshd's "Accepted" lines).
void RemoteRun(const std::string& dir, int* connections, int* accepted, std::string* status) {
  const std::string ssh_dir = "/run/trtllm-test-sshd";
  std::string work = dir + "/remote";
  fs::create_directories(work);
  std::string config = work + "/ssh_config";
  std::ofstream(config) << "Host trtllm-bench-login\n  HostName 127.0.0.1\n  Port 2222\n"
                        << "  User sshtest\n  IdentityFile " << ssh_dir << "/id_ed25519\n"
                        << "  IdentitiesOnly yes\n  UserKnownHostsFile " << ssh_dir
                        << "/known_hosts\n";
  JobSpec spec;
  spec.scenario = "remote_slurm";
  spec.workflow_type = "custom";
  spec.model_name = "bench";
  spec.work_dir = work;
  spec.ssh_host = "trtllm-bench-login";
  spec.extra["ssh_config_file"] = config;
  spec.remote_work_dir = "/home/sshtest/trtllm_bench_" + std::to_string(::getpid());
  spec.script_name = "bench_remote.sh";
  spec.script_path = work + "/bench_remote.sh";
  spec.build_project = false;
  std::ofstream(spec.script_path) << "#!/bin/bash\n#SBATCH --output=" << spec.remote_work_dir
                                  << "/bench_remote_%j.out\n#SBATCH --time=5\n"
                                  << "srun -l bash -c 'for i in 1 2 3 4 5; do echo tick $i; "
                                     "sleep 1; done'\n"
                                  << "echo \"[trtllm-run] job finished with exit code $?\"\n";
  auto count = [&]() {
    return std::atoi(
        Shell("grep -c 'Accepted publickey for sshtest' " + ssh_dir + "/sshd.log").c_str());
  };
  int before = count();
  ExecContext context;
  RunResult result = RunRemoteSlurmJob(spec, context);
  *accepted = count() - before;
  *connections = std::atoi(result.details["ssh_connections"].c_str());
  *status = RunStatusName(result.status);
  Shell("rm -rf " + ShellQuote(spec.remote_work_dir));
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 50, seconds = 5;
  std::string partition, watch, ids, outs;
  bool remote = false, check = false, naive = true, smoke = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "slurm_watch_bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--jobs") {
      jobs = std::atoi(next().c_str());
    } else if (arg == "--seconds") {
      seconds = std::atoi(next().c_str());
    } else if (arg == "--partition") {
      partition = next();
    } else if (arg == "--remote") {
      remote = true;
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--smoke") {
      smoke = true;
    } else if (arg == "--no-naive") {
      naive = false;
    } else if (arg == "--watch") {
      watch = next();
    } else if (arg == "--ids") {
      ids = next();
    } else if (arg == "--outs") {
      outs = next();
    } else {
      std::cerr << "usage: slurm_watch_bench [--jobs N] [--seconds S] [--partition P] [--remote] "
                   "[--check] [--no-naive] [--smoke]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (!watch.empty()) return WatchMain(watch, Split(ids, ','), Split(outs, ','));
  if (smoke) {
    // CI's brief run: a few jobs, no baseline; fails when a verdict is wrong or late or the
    // remote run needs more than one connection (RPCs per job-minute are not meaningful
    // for so few job-minutes: the fixed cost of the first queries dominates).
    jobs = 10;
    seconds = 3;
    naive = false;
    remote = true;
  }
  if (jobs < 1 || seconds < 1) {
    std::cerr << "slurm_watch_bench: --jobs and --seconds must be positive\n";
    return 2;
  }
  std::string self = fs::canonical("/proc/self/exe").string();
  bool isolate = ::geteuid() == 0 && EnsureWatchUser();
  char templ[] = "/tmp/trtllm_bench_XXXXXX";
  std::string dir = ::mkdtemp(templ);
  ::chmod(dir.c_str(), 0755);
  std::cerr << "slurm_watch_bench: " << jobs << " jobs of " << seconds << " s per watcher, in "
            << dir
            << (isolate ? "; watchers run as user " + std::string(kWatchUser)
                        : "; RPCs by message type (not isolated from other users)")
            << "\n";

  Phase ours = RunPhase("ours", self, dir, jobs, seconds, partition, isolate);
  Phase baseline;
  if (naive) baseline = RunPhase("naive", self, dir, jobs, seconds, partition, isolate);
  int connections = 0, accepted = 0;
  std::string remote_status;
  if (remote) RemoteRun(dir, &connections, &accepted, &remote_status);

  auto per_job_minute = [](const Phase& p) {
    return p.job_minutes > 0 ? (p.ctld_queries + p.dbd_queries) / p.job_minutes : 0.0;
  };
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "\nslurm_watch_bench: " << jobs << " concurrent jobs of " << seconds << " s"
            << (partition.empty() ? "" : " on partition " + partition) << "\n";
  std::cout << "scheduler RPCs counted "
            << (isolate ? "for the watcher's own user" : "by message type")
            << " (slurmctld: sdiag, slurmdbd: sacctmgr show stats)\n\n";
  std::cout << std::left << std::setw(44) << "metric" << std::setw(12) << "target" << std::setw(14)
            << "trtllm-run"
            << "naive (1 squeue/job/s)\n";
  auto row = [&](const std::string& name, const std::string& target, const std::string& a,
                 const std::string& b) {
    std::cout << std::left << std::setw(44) << name << std::setw(12) << target << std::setw(14) << a
              << b << "\n";
  };
  auto num = [](double value) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2) << value;
    return out.str();
  };
  row("query RPCs per job-minute", "<= 2", num(per_job_minute(ours)),
      naive ? num(per_job_minute(baseline)) : "-");
  row("  slurmctld query RPCs", "", std::to_string(ours.ctld_queries),
      naive ? std::to_string(baseline.ctld_queries) : "-");
  row("  slurmdbd RPCs", "", std::to_string(ours.dbd_queries),
      naive ? std::to_string(baseline.dbd_queries) : "-");
  row("  job-minutes (sum of job run times)", "", num(ours.job_minutes),
      naive ? num(baseline.job_minutes) : "-");
  row("median delay job end -> verdict (s)", "<= 1", num(ours.median_delay),
      naive ? num(baseline.median_delay) : "-");
  row("  p90 / max delay (s)", "", num(ours.p90_delay) + " / " + num(ours.max_delay),
      naive ? num(baseline.p90_delay) + " / " + num(baseline.max_delay) : "-");
  row("  watch wall time (s)", "", num(ours.wall), naive ? num(baseline.wall) : "-");
  row("  jobs not PASSED", "0", std::to_string(ours.not_passed),
      naive ? std::to_string(baseline.not_passed) : "-");
  if (remote) {
    row("SSH connections per remote run", "1",
        std::to_string(connections) + " (sshd: " + std::to_string(accepted) + ")", "-");
    row("  remote run verdict", "PASSED", remote_status, "-");
  }
  bool basics = ours.median_delay <= 1.0 && ours.not_passed == 0 &&
                (!remote || (connections == 1 && remote_status == "PASSED"));
  bool ok = basics && per_job_minute(ours) <= 2.0;
  std::cout << "\nresult: "
            << (ok                ? "targets met"
                : smoke && basics ? "smoke run passed"
                                  : "TARGETS MISSED")
            << "\n";
  fs::remove_all(dir);
  if (smoke) return basics ? 0 : 1;
  return check && !ok ? 1 : 0;
}
