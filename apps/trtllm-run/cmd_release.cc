// trtllm-run release: ends the Slurm allocations that persistent mode holds for later
// runs (slurm_run.h, "Held allocations").
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <memory>

#include "cli.h"
#include "trtllm_run/scenario.h"
#include "trtllm_run/slurm_run.h"
#include "trtllm_run/ssh.h"

namespace trtllm_run::cli {

namespace {

std::string Describe(const HeldAllocation& a) {
  long long now = static_cast<long long>(std::time(nullptr));
  std::string where = a.host.empty() ? "this host" : a.host;
  return "allocation " + a.job_id + " on " + where + " (" + a.key + ", --time " + a.time_limit +
         ", idle " + std::to_string(now - a.last_used_at) + "s of " +
         std::to_string(a.idle_limit_seconds) + "s)";
}

// One allocation in `release --json`: its record plus what happened to it.
void WriteAllocationJson(const HeldAllocation& a, const std::string& outcome,
                         rapidjson::PrettyWriter<rapidjson::StringBuffer>* w) {
  auto str = [&](const char* key, const std::string& value) {
    w->Key(key);
    w->String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w->StartObject();
  str("job_id", a.job_id);
  str("host", a.host);
  str("key", a.key);
  str("time_limit", a.time_limit);
  w->Key("last_used_at");
  w->Int64(a.last_used_at);
  w->Key("idle_limit_seconds");
  w->Int(a.idle_limit_seconds);
  str("outcome", outcome);
  w->EndObject();
}

}  // namespace

int ReleaseMain(int argc, char** argv) {
  po::options_description options("Release");
  options.add_options()("list", po::bool_switch(), "only list the held allocations")(
      "idle", po::bool_switch(), "release only the allocations idle past their idle limit")(
      "job-id", po::value<std::vector<std::string>>(),
      "release only this allocation (repeatable; default: all)")(
      "json", po::bool_switch(),
      "print {\"allocations\": [...]} on stdout, each with its outcome (held, released, "
      "failed); the text lines go to stderr");
  po::variables_map vm;
  if (std::optional<int> done = Parse("release", argc, argv, options, &vm)) return *done;
  const bool json = vm["json"].as<bool>();
  std::ostream& text = json ? std::cerr : std::cout;
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("allocations");
  w.StartArray();
  auto finish_json = [&] {
    w.EndArray();
    w.EndObject();
    if (json) std::cout << buffer.GetString() << "\n";
  };
  std::vector<HeldAllocation> held = ListHeldAllocations();
  if (vm["list"].as<bool>()) {
    if (held.empty()) text << "no held allocations (" << AllocationStateDir() << ")\n";
    for (const HeldAllocation& a : held) {
      text << Describe(a) << "\n";
      WriteAllocationJson(a, "held", &w);
    }
    finish_json();
    return 0;
  }
  std::vector<std::string> only;
  if (vm.count("job-id")) only = vm["job-id"].as<std::vector<std::string>>();
  long long now = static_cast<long long>(std::time(nullptr));
  int failures = 0, released = 0;
  for (const HeldAllocation& a : held) {
    if (!only.empty() && std::find(only.begin(), only.end(), a.job_id) == only.end()) continue;
    if (vm["idle"].as<bool>() && now - a.last_used_at <= a.idle_limit_seconds) continue;
    std::unique_ptr<Scenario> scenario;
    if (a.host.empty()) {
      scenario = MakeLocalScenario();
    } else {
      JobSpec connection;
      connection.work_dir = "(release)";
      connection.ssh_host = a.host;
      connection.slurm_user = a.user;
      const std::pair<const char*, const std::string*> connection_extras[] = {
          {"ssh_config_file", &a.ssh_config_file},
          {"ssh_port", &a.ssh_port},
          {"ssh_identity_file", &a.ssh_identity_file},
          {"ssh_options", &a.ssh_options}};
      for (const auto& [key, value] : connection_extras) {
        if (!value->empty()) connection.extra[key] = *value;
      }
      Result<SshOptions> ssh_options = SshOptionsForSpec(connection);
      Result<std::unique_ptr<SshScenario>> ssh =
          ssh_options.ok() ? MakeSshScenario(ssh_options.value())
                           : Result<std::unique_ptr<SshScenario>>(ssh_options.status());
      if (!ssh.ok()) {
        std::cerr << "trtllm-run release: error: " << Describe(a) << ": " << ssh.status().ToString()
                  << "\n";
        WriteAllocationJson(a, "failed", &w);
        ++failures;
        continue;
      }
      scenario = std::move(ssh.value());
    }
    Status status = ReleaseHeldAllocation(a, scenario.get());
    if (status.ok()) {
      text << "released " << Describe(a) << "\n";
      WriteAllocationJson(a, "released", &w);
      ++released;
    } else {
      std::cerr << "trtllm-run release: error: " << status.ToString() << "\n";
      WriteAllocationJson(a, "failed", &w);
      ++failures;
    }
  }
  if (released == 0 && failures == 0) text << "nothing to release\n";
  finish_json();
  return failures == 0 ? 0 : 3;
}

}  // namespace trtllm_run::cli
