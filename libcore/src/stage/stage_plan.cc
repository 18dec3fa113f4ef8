// Planning a CI stage (see stage_plan.h): stage table -> keys -> rendered test-db ->
// waives -> least_duration shards.
#include "stage/stage_plan.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "model/edit_distance.h"
#include "stage/least_duration.h"
#include "stage/stage_table.h"
#include "stage/test_db_render.h"
#include "trtllm_run/sdk/commands/test_list_line.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// A stage name as an error shows it: control characters escaped, and at most
// kHintNameBytes of it (a table, or the name asked for, may hold names of any length).
constexpr std::size_t kHintNameBytes = 120;
std::string NameForHint(const std::string& name) {
  if (name.size() <= kHintNameBytes) return EscapeControl(name);
  return EscapeControl(name.substr(0, kHintNameBytes)) + "... (" + std::to_string(name.size()) +
         " bytes)";
}

namespace fs = std::filesystem;

constexpr char kStageTable[] = "jenkins/L0_Test.groovy";
constexpr char kTestDbDir[] = "tests/integration/test_lists/test-db";
constexpr char kWaives[] = "tests/integration/test_lists/waives.txt";
constexpr char kDurations[] = "tests/integration/defs/.test_durations";
constexpr int kMaxSplits = 1000;

// The given root, else the nearest ancestor of the cwd holding .git, else the cwd.
Result<std::string> RepoRoot(const std::string& given) {
  std::error_code error;
  if (!given.empty()) {
    if (!fs::is_directory(given, error)) {
      return Status::InvalidInput("repo root '" + given + "' is not a directory",
                                  "give the TensorRT-LLM checkout with --repo-root DIR");
    }
    return given;
  }
  const fs::path cwd = fs::current_path(error);
  if (error) return Status::IoError("cannot read the current directory: " + error.message());
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return cwd.string();
}

// The file at `path`, or kInvalidInput naming it and `what` when it is not there.
Result<std::string> ReadInput(const std::string& path, const std::string& what,
                              const std::string& hint) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return Status::InvalidInput(what + " '" + path + "' does not exist or is not a file", hint);
  }
  return ReadFileLimited(path, kMaxCasesFileBytes, what);
}

bool IsContextName(const std::string& name) {
  return !name.empty() && name.size() <= 200 && name[0] != '.' &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '_' || c == '-' || c == '.';
         });
}

// The entries of `stage`: itself, else its family ("<stage>-<N>"). kInvalidInput naming
// near names when there is none.
Result<std::vector<StageEntry>> FindStage(const std::vector<StageEntry>& table,
                                          const std::string& stage, const std::string& origin) {
  for (const StageEntry& entry : table) {
    if (entry.name == stage) return std::vector<StageEntry>{entry};
  }
  std::vector<StageEntry> family;
  for (const StageEntry& entry : table) {
    const std::string& name = entry.name;
    if (name.size() > stage.size() + 1 && name.compare(0, stage.size(), stage) == 0 &&
        name[stage.size()] == '-' &&
        std::all_of(name.begin() + static_cast<long>(stage.size()) + 1, name.end(),
                    [](unsigned char c) { return std::isdigit(c); })) {
      family.push_back(entry);
    }
  }
  if (!family.empty()) {
    std::sort(family.begin(), family.end(),
              [](const StageEntry& a, const StageEntry& b) { return a.split_id < b.split_id; });
    for (const StageEntry& entry : family) {
      if (entry.context != family[0].context) {
        return Status::InvalidInput("stage family '" + stage + "' of " + origin +
                                        " has splits on two test-db contexts (" + family[0].name +
                                        ": " + family[0].context + ", " + entry.name + ": " +
                                        entry.context + ")",
                                    "give one stage name");
      }
    }
    return family;
  }
  std::vector<std::string> names;
  for (const StageEntry& entry : table) names.push_back(entry.name);
  std::vector<std::string> near;
  if (std::string closest = ClosestName(stage, names); !closest.empty()) near.push_back(closest);
  const std::string lower_stage = AsciiLower(stage);
  for (const std::string& name : names) {
    if (near.size() < 5 && !lower_stage.empty() &&
        AsciiLower(name).find(lower_stage) != std::string::npos &&
        std::find(near.begin(), near.end(), name) == near.end()) {
      near.push_back(name);
    }
  }
  std::string hint;
  for (const std::string& name : near) hint += (hint.empty() ? "" : ", ") + NameForHint(name);
  return Status::InvalidInput(
      "unknown stage '" + NameForHint(stage) + "': " + origin + " has no stage of that name " +
          "nor a family of its splits (" + std::to_string(table.size()) + " stages read)",
      near.empty()
          ? "give a stage name of the table, e.g. " +
                (names.empty() ? std::string("DGX_B200-4_GPUs-PyTorch-1") : NameForHint(names[0]))
          : "did you mean: " + hint);
}

struct Waive {
  std::string reason;
  std::string origin;
};

// The SKIP lines of the waives file that apply to `stage_gpu` (full:<GPU>/ lines only
// where <GPU> is the stage name's GPU segment, as test_list_parser.py's --test-prefix
// rewriting makes them match), keyed by TestListKey. A line the list grammar cannot read
// ("a.py b.py SKIP (..)": several ids on one line, as the real waives.txt has) is what
// test_list_parser.py takes as one test name that names no test: it waives nothing, and
// `warnings` says so; the plan does not fail on it.
Result<std::map<std::string, Waive>> ReadWaives(const std::string& text, const std::string& origin,
                                                const std::string& stage_gpu,
                                                std::vector<std::string>* warnings) {
  std::map<std::string, Waive> waives;
  std::istringstream lines(text);
  std::string raw;
  int number = 0;
  while (std::getline(lines, raw)) {
    ++number;
    const std::string where = origin + ":" + std::to_string(number);
    // test_list_parser.py: everything from the first '#' is a comment.
    std::string line(Trim(raw.substr(0, raw.find('#'))));
    if (line.empty()) continue;
    Result<std::optional<TestListLine>> parsed = ParseTestListLine(line);
    // test_list_parser.py: the name is everything before " SKIP"; with blanks in it and no
    // -k / -m selector it names no test.
    const std::string name = line.substr(0, line.find(" SKIP"));
    const bool several_ids = name.find(' ') != std::string::npos &&
                             name.find(" -k ") == std::string::npos &&
                             name.find(" -m ") == std::string::npos;
    if (!parsed.ok() && several_ids) {
      warnings->push_back(where + ": waives nothing, CI's test_list_parser.py reads it as one " +
                          "test name that names no test (" + parsed.status().message() + ")");
      continue;
    }
    if (!parsed.ok()) return parsed.status().WithContext(where);
    if (!parsed.value()) {
      return Status::InvalidInput(where + ": '" + EscapeControl(line) + "' is not a waive line",
                                  "a waive is `[full:<GPU>/]<test id> SKIP (<reason>)`");
    }
    const TestListLine& waive = *parsed.value();
    if (waive.marker != ListMarker::kSkip) continue;  // XFAIL / UNSTABLE: the test runs
    if (!waive.gpu_prefix.empty() && waive.gpu_prefix != stage_gpu) continue;
    waives.emplace(TestListKey(waive),
                   Waive{waive.reason.empty() ? "waived" : waive.reason, where});
  }
  return waives;
}

// The .yml file of `dir` (in name order) with a top-level `<context>:` key, if any.
std::optional<fs::path> FileDeclaring(const fs::path& dir, const std::string& context) {
  std::vector<fs::path> files;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".yml" && it->is_regular_file(error)) files.push_back(*it);
  }
  std::sort(files.begin(), files.end());
  const std::string key = context + ":";
  for (const fs::path& file : files) {
    Result<std::string> text = ReadFileLimited(file.string(), kMaxCasesFileBytes, "test-db YAML");
    if (!text.ok()) continue;
    std::istringstream lines(text.value());
    std::string line;
    while (std::getline(lines, line)) {
      if (line.compare(0, key.size(), key) == 0 &&
          Trim(std::string_view(line).substr(key.size())).empty()) {
        return file;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Result<StagePlan> PlanStage(const StageRequest& request) {
  Result<std::string> root = RepoRoot(request.repo_root);
  if (!root.ok()) return root.status();
  const fs::path repo(root.value());
  if (request.splits && (*request.splits < 1 || *request.splits > kMaxSplits)) {
    return Status::InvalidInput("--splits " + std::to_string(*request.splits) +
                                " is out of range: give 1 to " + std::to_string(kMaxSplits));
  }
  for (const auto& [key, value] : request.match) {
    if (key.empty() || key.find_first_of(" \t=") != std::string::npos) {
      return Status::InvalidInput("--match key '" + EscapeControl(key) + "' is not a key name",
                                  "give --match key=value, e.g. --match system_gpu_count=4");
    }
  }
  StagePlan plan;
  plan.stage_name = request.stage;
  // The name the keys come from: the stage's, or its first split's for a family
  // ("...-PyTorch" has no "-PyTorch-" of its own).
  std::string key_name = request.stage;

  if (request.test_db_context) {
    plan.test_db_context = *request.test_db_context;
    plan.split_count = request.splits.value_or(1);
    for (int k = 1; k <= plan.split_count; ++k) plan.splits.push_back(k);
  } else {
    if (request.stage.empty()) {
      return Status::InvalidInput("no stage given",
                                  "give --stage NAME (a stage of jenkins/L0_Test.groovy) or "
                                  "--test-db CONTEXT");
    }
    const std::string table_path = (repo / kStageTable).string();
    Result<std::string> groovy =
        ReadInput(table_path, "stage table",
                  "give the TensorRT-LLM checkout with --repo-root DIR, or the test-db context "
                  "with --test-db CONTEXT");
    if (!groovy.ok()) return groovy.status();
    Result<std::vector<StageEntry>> entries =
        FindStage(ReadStageTable(groovy.value()), request.stage, kStageTable);
    if (!entries.ok()) return entries.status();
    const StageEntry& first = entries->front();
    key_name = first.name;
    plan.test_db_context = first.context;
    plan.gpu_count = first.gpu_count;
    plan.node_count = first.node_count;
    plan.split_count = request.splits.value_or(first.split_count);
    if (entries->size() == 1 && first.name == request.stage) {
      if (first.split_id > plan.split_count) {
        return Status::InvalidInput("stage " + request.stage + " is split " +
                                        std::to_string(first.split_id) +
                                        " of its stage family: "
                                        "--splits " +
                                        std::to_string(plan.split_count) + " has no such split",
                                    "give --splits " + std::to_string(first.split_id) +
                                        " or more, or the family name without -N");
      }
      plan.splits.push_back(first.split_id);
      if (!request.splits) plan.split_count = first.split_count;
    } else if (request.splits) {
      for (int k = 1; k <= plan.split_count; ++k) plan.splits.push_back(k);
    } else {
      for (const StageEntry& entry : *entries) plan.splits.push_back(entry.split_id);
      plan.split_count = std::max(plan.split_count, plan.splits.back());
    }
  }
  if (!IsContextName(plan.test_db_context)) {
    return Status::InvalidInput(
        "test-db context '" + EscapeControl(plan.test_db_context) + "' is not a file name",
        "a context is the name of a test-db YAML without .yml, e.g. "
        "l0_dgx_b200");
  }

  std::map<std::string, std::string>& keys = plan.match_keys;
  std::map<std::string, std::string>& origins = plan.key_origins;
  if (!key_name.empty()) keys = MatchKeysFromStageName(key_name);
  for (const auto& [key, value] : keys) origins[key] = "stage name";
  const bool name_gave_gpu = keys.count("gpu") > 0;
  // The target's facts: given (nvidia-smi locally), else the Slurm partition's GRES.
  std::optional<std::string> target_gpu = request.target_gpu;
  std::optional<int> target_count = request.target_system_gpu_count;
  std::string gpu_origin = request.target_origin, count_origin = request.target_origin;
  const bool target_known = target_gpu || target_count || request.target_partition;
  if (!target_gpu && !target_count && request.target_partition) {
    StageTargetKeys from_partition =
        StageKeysFromPartition(*request.target_partition, plan.gpu_count, plan.node_count);
    target_gpu = from_partition.gpu;
    target_count = from_partition.system_gpu_count;
    gpu_origin = from_partition.gpu_origin;
    count_origin = from_partition.system_gpu_count_origin;
    plan.warnings.insert(plan.warnings.end(), from_partition.warnings.begin(),
                         from_partition.warnings.end());
  }
  // gpu / system_gpu_count: --match, else the target's facts, else the stage's name/table.
  std::vector<std::string> from_name;
  if (target_gpu) {
    keys["gpu"] = *target_gpu;
    origins["gpu"] = gpu_origin.empty() ? "the target" : gpu_origin;
  } else if (!request.stage.empty() && !request.match.count("gpu")) {
    if (!name_gave_gpu) {
      keys["gpu"] = AsciiLower(StageGpuSegment(request.stage));
      origins["gpu"] = "stage name's GPU segment";
    }
    from_name.push_back("gpu=" + keys["gpu"]);
  }
  if (target_count) {
    keys["system_gpu_count"] = std::to_string(*target_count);
    origins["system_gpu_count"] = count_origin.empty() ? "the target" : count_origin;
  } else if (!request.match.count("system_gpu_count") && (name_gave_gpu || plan.gpu_count > 0)) {
    if (!name_gave_gpu) {
      keys["system_gpu_count"] = std::to_string(plan.gpu_count);
      origins["system_gpu_count"] = "stage table's GPU count";
    }
    from_name.push_back("system_gpu_count=" + keys["system_gpu_count"]);
  }
  for (const auto& [key, value] : request.match) {
    keys[key] = value;
    origins[key] = "--match";
  }
  if (!from_name.empty() && !target_known) {
    std::string names;
    for (const std::string& key : from_name) names += (names.empty() ? "" : ", ") + key;
    plan.warnings.push_back(names + " come from the stage's name and table, not from the " +
                            "target's GPUs (not probed): give --match key=value to plan for "
                            "another machine");
  }

  // Render the test-db.
  const fs::path db_dir = repo / kTestDbDir;
  std::string db_path = (db_dir / (plan.test_db_context + ".yml")).string();
  std::string db_origin = std::string(kTestDbDir) + "/" + plan.test_db_context + ".yml";
  std::error_code error;
  if (!fs::is_regular_file(db_path, error)) {
    // A context may sit in a file of another name (l0_a10.yml holds l0_nanobind_test:).
    if (std::optional<fs::path> holder = FileDeclaring(db_dir, plan.test_db_context)) {
      db_path = holder->string();
      db_origin = std::string(kTestDbDir) + "/" + holder->filename().string();
    }
  }
  if (!fs::is_regular_file(db_path, error)) {
    std::vector<std::string> contexts;
    for (fs::directory_iterator it(db_dir, error), end; !error && it != end; it.increment(error)) {
      if (it->path().extension() == ".yml") contexts.push_back(it->path().stem().string());
    }
    std::string closest = ClosestName(plan.test_db_context, contexts);
    for (const std::string& context : contexts) {
      // l0_dgx_b200_sparse -> l0_dgx_b200: a context the name extends.
      if (closest.empty() && plan.test_db_context.rfind(context, 0) == 0) closest = context;
    }
    return Status::InvalidInput(
        "test-db context '" + plan.test_db_context + "' has no file " + db_path,
        closest.empty() ? "the contexts are the .yml files of " + std::string(kTestDbDir)
                        : "did you mean: " + closest);
  }
  Result<std::string> yaml = ReadInput(db_path, "test-db YAML", "");
  if (!yaml.ok()) return yaml.status();
  Result<RenderedTestDb> rendered =
      RenderTestDb(yaml.value(), db_origin, plan.test_db_context, keys);
  if (!rendered.ok()) return rendered.status();
  plan.matched_blocks_explained = rendered->explained;
  plan.warnings.insert(plan.warnings.end(), rendered->warnings.begin(), rendered->warnings.end());
  if (rendered->tests.empty()) {
    std::string why;
    for (const std::string& line : rendered->explained) why += "\n  " + line;
    return Status::InvalidInput(
        "test-db context " + plan.test_db_context + " renders no tests with keys {" +
            KeysText(keys) + "}: no block of " + db_origin + " matches" + why,
        "check the stage name, or override a key with --match key=value (e.g. --match "
        "system_gpu_count=4)");
  }

  // Waives: SKIP, never submitted.
  const bool waives_given = request.waives_file.has_value();
  const std::string waives_path = waives_given ? *request.waives_file : (repo / kWaives).string();
  std::map<std::string, Waive> waives;
  if (waives_given || fs::exists(waives_path, error)) {
    Result<std::string> text = ReadInput(waives_path, "waives file", "give --waives FILE");
    if (!text.ok()) return text.status();
    Result<std::map<std::string, Waive>> read =
        ReadWaives(text.value(), waives_given ? waives_path : kWaives,
                   request.stage.empty() ? "" : StageGpuSegment(request.stage), &plan.warnings);
    if (!read.ok()) return read.status();
    waives = std::move(read.value());
  } else {
    plan.warnings.push_back(std::string("no ") + kWaives + " in the checkout: nothing is waived");
  }

  // Durations and the split.
  const bool durations_given = request.durations_file.has_value();
  const std::string durations_path =
      durations_given ? *request.durations_file : (repo / kDurations).string();
  std::map<std::string, double> durations;
  if (request.durations) {
    durations = *request.durations;
    plan.durations_source = request.durations_origin;
  } else if (durations_given || fs::exists(durations_path, error)) {
    Result<std::string> text = ReadInput(durations_path, "durations file", "");
    if (!text.ok()) return text.status();
    Result<std::map<std::string, double>> parsed =
        ParseTestDurations(text.value(), durations_given ? durations_path : kDurations);
    if (!parsed.ok()) return parsed.status();
    durations = std::move(parsed.value());
    plan.durations_source = durations_given ? durations_path : kDurations;
  } else if (!request.fallback_durations.empty()) {
    durations = request.fallback_durations;
    plan.durations_source = request.fallback_durations_origin;
    plan.warnings.push_back(std::string("no ") + kDurations + " in the checkout: the split uses " +
                            request.fallback_durations_origin);
  } else {
    plan.warnings.push_back(std::string("no ") + kDurations +
                            " in the checkout: every test counts 1 s in the split, as "
                            "pytest-split does without durations");
  }
  std::vector<std::string> node_ids;
  for (const RenderedTest& test : rendered->tests) node_ids.push_back(test.node_id);
  std::vector<double> seconds;
  const std::vector<SplitGroup> groups =
      LeastDurationSplit(node_ids, durations, plan.split_count, &seconds);
  for (int split : plan.splits) {
    StageShard shard;
    shard.split_id = split;
    for (std::size_t item : groups[static_cast<std::size_t>(split - 1)].items) {
      const TestListLine& line = rendered->tests[item].line;
      StageTest test;
      test.id = TestListKey(line);
      test.isolation = line.isolation;
      test.expected_seconds = seconds[item];
      test.timeout_seconds = line.timeout_minutes.value_or(0) * 60;
      if (line.marker == ListMarker::kSkip) {
        test.waived_reason =
            line.reason.empty() ? "SKIP in " + rendered->tests[item].origin : line.reason;
      } else if (auto waive = waives.find(test.id); waive != waives.end()) {
        test.waived_reason = waive->second.reason;
      }
      if (test.waived_reason) {
        plan.waived.push_back(std::move(test));
        continue;
      }
      shard.expected_seconds += test.expected_seconds;
      shard.tests.push_back(std::move(test));
    }
    if (shard.tests.empty()) {
      plan.warnings.push_back(
          "split " + std::to_string(split) + " of " + std::to_string(plan.split_count) +
          " gets no test to run (" + std::to_string(rendered->tests.size()) + " rendered over " +
          std::to_string(plan.split_count) + " splits): nothing is submitted for it");
    }
    plan.shards.push_back(std::move(shard));
  }
  return plan;
}

}  // namespace trtllm_run
