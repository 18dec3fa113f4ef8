// trtllm-run release: ends what executors hold between runs (Executor::ListHeld /
// ReleaseHeld), e.g. the Slurm allocations persistent mode keeps for later runs.
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <memory>

#include "cli.h"

namespace trtllm_run::cli {

namespace {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// One held resource and the executor that holds it.
struct Held {
  std::shared_ptr<Executor> executor;
  HeldResource resource;
};

// What every loaded executor holds, in executor name order. An executor that cannot be
// created or asked is reported on stderr and counted in `failures`.
std::vector<Held> ListAllHeld(const Registry& registry, int* failures) {
  std::vector<Held> all;
  for (const std::string& name : registry.ExecutorNames()) {
    Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor(name);
    if (!executor.ok()) continue;  // `trtllm-run plugins` reports broken plugins
    try {
      for (HeldResource& resource : executor.value()->ListHeld()) {
        all.push_back(Held{executor.value(), std::move(resource)});
      }
    } catch (const std::exception& e) {
      std::cerr << "trtllm-run release: error: executor " << name
                << " could not list what it holds: " << e.what() << "\n";
      ++*failures;
    }
  }
  return all;
}

// One element of release --json's "allocations": what is held and what became of it
// (held, released, failed).
void WriteHeldJson(const Held& held, const std::string& outcome, JsonWriter* w) {
  auto str = [&](const char* key, const std::string& value) {
    w->Key(key);
    w->String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w->StartObject();
  str("executor", held.executor->Name());
  str("id", held.resource.id);
  str("description", held.resource.description);
  w->Key("last_used_at");
  w->Int64(held.resource.last_used_at);
  w->Key("idle_limit_seconds");
  w->Int(held.resource.idle_limit_seconds);
  str("outcome", outcome);
  w->EndObject();
}

}  // namespace

int ReleaseMain(int argc, char** argv) {
  po::options_description options("Release");
  options.add_options()("list", po::bool_switch(), "only list the held allocations")(
      "idle", po::bool_switch(), "release only the allocations idle past their idle limit")(
      "job-id", po::value<std::vector<std::string>>()->value_name("JOB_ID"),
      "release only this allocation (repeatable; default: all)")(
      "json", po::bool_switch(),
      "print {\"allocations\": [...]} on stdout, each with its outcome (held, released, "
      "failed); the text lines go to stderr");
  options.add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("release", argc, argv, options, &vm)) return *done;
  const bool json = vm["json"].as<bool>();
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("release", runtime.status());
  std::ostream& text = json ? std::cerr : std::cout;
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("allocations");
  w.StartArray();
  auto finish = [&](int code) {
    w.EndArray();
    w.EndObject();
    if (json) std::cout << buffer.GetString() << "\n";
    return code;
  };
  int failures = 0, released = 0;
  std::vector<Held> held = ListAllHeld(runtime.value()->registry(), &failures);
  if (vm["list"].as<bool>()) {
    if (held.empty()) text << "no held allocations\n";
    for (const Held& h : held) {
      text << h.resource.description << "\n";
      WriteHeldJson(h, "held", &w);
    }
    return finish(failures == 0 ? 0 : 3);
  }
  std::vector<std::string> only;
  if (vm.count("job-id")) only = vm["job-id"].as<std::vector<std::string>>();
  long long now = static_cast<long long>(std::time(nullptr));
  for (const Held& h : held) {
    const HeldResource& r = h.resource;
    if (!only.empty() && std::find(only.begin(), only.end(), r.id) == only.end()) continue;
    if (vm["idle"].as<bool>() && now - r.last_used_at <= r.idle_limit_seconds) continue;
    Status status = Status::Ok();
    try {
      status = h.executor->ReleaseHeld(r.id);
    } catch (const std::exception& e) {
      status = Status::PluginError("executor " + h.executor->Name() + " threw: " + e.what());
    }
    if (status.ok()) {
      text << "released " << r.description << "\n";
      WriteHeldJson(h, "released", &w);
      ++released;
    } else {
      std::cerr << "trtllm-run release: error: " << r.description << ": " << status.ToString()
                << "\n";
      WriteHeldJson(h, "failed", &w);
      ++failures;
    }
  }
  if (released == 0 && failures == 0) text << "nothing to release\n";
  return finish(failures == 0 ? 0 : 3);
}

}  // namespace trtllm_run::cli
