// trtllm-run plugins: what was found, where, and what failed to load.
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli.h"

namespace trtllm_run::cli {

namespace {

// {"plugins": [{kind, name, version, file}], "problems": [...]}.
std::string PluginsJson(const Registry& registry) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  w.Key("plugins");
  w.StartArray();
  for (const PluginInfo& plugin : registry.plugins()) {
    w.StartObject();
    str("kind", PluginKindName(plugin.kind));
    str("name", plugin.name);
    str("version", plugin.version);
    str("file", plugin.path);
    w.EndObject();
  }
  w.EndArray();
  w.Key("problems");
  w.StartArray();
  for (const PluginProblem& problem : registry.problems()) {
    const std::string text = problem.status.ToString();
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

int PluginsMain(int argc, char** argv) {
  po::options_description visible("Plugins");
  visible.add_options()("json", po::bool_switch(), "print the plugins and problems as JSON");
  visible.add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("plugins", argc, argv, visible, &vm)) return *done;
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plugins", runtime.status());
  const Registry& registry = runtime.value()->registry();
  if (vm["json"].as<bool>()) {
    std::cout << PluginsJson(registry);
    return 0;
  }
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
