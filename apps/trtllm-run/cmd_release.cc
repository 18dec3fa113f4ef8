// trtllm-run release: ends what executors hold between runs (Executor::ListHeld /
// ReleaseHeld), e.g. the Slurm allocations persistent mode keeps for later runs.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <memory>

#include "cli.h"

namespace trtllm_run::cli {

namespace {

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

}  // namespace

int ReleaseMain(int argc, char** argv) {
  po::options_description options("Release");
  options.add_options()("list", po::bool_switch(), "only list the held allocations")(
      "idle", po::bool_switch(), "release only the allocations idle past their idle limit")(
      "job-id", po::value<std::vector<std::string>>(),
      "release only this allocation (repeatable; default: all)");
  options.add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("release", argc, argv, options, &vm)) return *done;
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("release", runtime.status());
  int failures = 0, released = 0;
  std::vector<Held> held = ListAllHeld(runtime.value()->registry(), &failures);
  if (vm["list"].as<bool>()) {
    if (held.empty()) std::cout << "no held allocations\n";
    for (const Held& h : held) std::cout << h.resource.description << "\n";
    return failures == 0 ? 0 : 3;
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
      std::cout << "released " << r.description << "\n";
      ++released;
    } else {
      std::cerr << "trtllm-run release: error: " << r.description << ": " << status.ToString()
                << "\n";
      ++failures;
    }
  }
  if (released == 0 && failures == 0) std::cout << "nothing to release\n";
  return failures == 0 ? 0 : 3;
}

}  // namespace trtllm_run::cli
