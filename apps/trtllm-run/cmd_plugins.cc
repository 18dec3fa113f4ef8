// trtllm-run plugins: what was found, where, and what failed to load.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli.h"

namespace trtllm_run::cli {

int PluginsMain(int argc, char** argv) {
  po::options_description visible;
  visible.add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("plugins", argc, argv, visible, &vm)) return *done;
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plugins", runtime.status());
  const Registry& registry = runtime.value()->registry();
  std::vector<PluginInfo> plugins = registry.plugins();
  size_t name_width = 4, version_width = 7;
  for (const PluginInfo& plugin : plugins) {
    name_width = std::max(name_width, plugin.name.size());
    version_width = std::max(version_width, plugin.version.size());
  }
  std::cout << std::left << std::setw(9) << "KIND"
            << "  " << std::setw(name_width) << "NAME"
            << "  " << std::setw(version_width) << "VERSION"
            << "  FILE\n";
  for (const PluginInfo& plugin : plugins) {
    std::cout << std::setw(9) << PluginKindName(plugin.kind) << "  " << std::setw(name_width)
              << plugin.name << "  " << std::setw(version_width) << plugin.version << "  "
              << plugin.path << "\n";
  }
  PrintPluginProblems(registry);
  return 0;
}

}  // namespace trtllm_run::cli
