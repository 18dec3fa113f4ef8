// The trtllm-bench, trtllm-eval and perf-sanity grammars, and Hugging Face model ids
// (see command_parse.h).
#include <algorithm>
#include <cctype>
#include <climits>
#include <filesystem>

#include "commands/command_excerpt.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

Result<int> PositiveInt(const std::string& value, const std::string& option,
                        std::string_view command) {
  std::optional<long long> n = ParseInteger(value, 1, 999999999);
  if (!n) {
    return Status::InvalidInput(
        option + " must be a positive integer, got '" + value + "' in: " + CommandExcerpt(command),
        "write e.g. " + option + " 4");
  }
  return static_cast<int>(*n);
}

}  // namespace

Result<EvalArgs> ParseEvalCommand(std::string_view eval_cmd) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(eval_cmd);
  if (!tokens.ok()) return tokens.status().WithContext("eval_cmd");
  std::optional<Invocation> invocation = LastInvocation(eval_cmd, "trtllm-eval");
  if (!invocation) {
    return Status::InvalidInput("eval_cmd does not run trtllm-eval: " + CommandExcerpt(eval_cmd),
                                "give a trtllm-eval command, e.g. trtllm-eval --model M "
                                "--tp_size 4 gsm8k; other commands go in --custom-cmd");
  }
  EvalArgs args;
  if (auto tp = invocation->Option({"--tp_size", "--tp-size"})) {
    Result<int> n = PositiveInt(*tp, "--tp_size", eval_cmd);
    if (!n.ok()) return n.status();
    args.tp_size = n.value();
  }
  if (auto pp = invocation->Option({"--pp_size", "--pp-size"})) {
    Result<int> n = PositiveInt(*pp, "--pp_size", eval_cmd);
    if (!n.ok()) return n.status();
    args.pp_size = n.value();
  }
  if (auto gpn = invocation->Option({"--gpus_per_node", "--gpus-per-node"})) {
    Result<int> n = PositiveInt(*gpn, "--gpus_per_node", eval_cmd);
    if (!n.ok()) return n.status();
    args.gpus_per_node = n.value();
  }
  args.model = invocation->Option({"--model", "--model_path"});
  // The task is the first positional word; options before it take a value unless they
  // are one of trtllm-eval's switches.
  static const char* const kSwitches[] = {"--trust_remote_code", "--disable_kv_cache_reuse"};
  const std::vector<ShellToken>& w = invocation->words;
  for (size_t i = 1; i < w.size(); ++i) {
    const std::string& word = w[i].text;
    if (word.empty() || word[0] != '-') {
      args.task = word;
      break;
    }
    bool is_switch = word.find('=') != std::string::npos;
    for (const char* s : kSwitches) is_switch = is_switch || word == s;
    if (!is_switch) ++i;  // skip the option's value
  }
  return args;
}

namespace {

// "--tp, --tp_size and --tp-size".
std::string SpellingList(std::initializer_list<std::string_view> spellings) {
  std::string text;
  size_t i = 0;
  for (std::string_view spelling : spellings) {
    text += (i == 0 ? "" : i + 1 == spellings.size() ? " and " : ", ") + std::string(spelling);
    ++i;
  }
  return text;
}

// One size option of trtllm-bench under each of its spellings: the value, the spelling
// it came from ("" when none was given), or an error when the spellings disagree or the
// value is not an integer >= the minimum.
Result<int> BenchSize(const Invocation& invocation, std::string_view bench_cmd,
                      std::initializer_list<std::string_view> spellings, int fallback, int minimum,
                      std::string* given_as) {
  std::optional<std::string> value;
  for (std::string_view spelling : spellings) {
    std::optional<std::string> found = invocation.Option({spelling});
    if (!found) continue;
    if (value && *found != *value) {
      return Status::InvalidInput(
          "bench_cmd: " + *given_as + " " + *value + " and " + std::string(spelling) + " " +
              *found + " give two sizes in: " + CommandExcerpt(bench_cmd),
          "give the size once: " + SpellingList(spellings) + " are one option");
    }
    if (!value) *given_as = std::string(spelling);
    value = found;
  }
  if (!value) return fallback;
  std::optional<long long> n = ParseInteger(*value, minimum, 999999999);
  if (!n) {
    return Status::InvalidInput("bench_cmd: " + *given_as + " must be a " +
                                    (minimum == 0 ? "non-negative" : "positive") +
                                    " integer, got '" + *value + "'",
                                "e.g. " + *given_as + " 4");
  }
  return static_cast<int>(*n);
}

}  // namespace

Result<BenchArgs> ParseBenchCommand(std::string_view bench_cmd) {
  std::optional<Invocation> invocation = LastInvocation(bench_cmd, "trtllm-bench");
  if (!invocation) {
    return Status::InvalidInput("bench_cmd does not run trtllm-bench",
                                "give a trtllm-bench command; other commands go in --custom-cmd");
  }
  BenchArgs args;
  Result<int> tp =
      BenchSize(*invocation, bench_cmd, {"--tp", "--tp_size", "--tp-size"}, 1, 1, &args.tp_option);
  if (!tp.ok()) return tp.status();
  Result<int> pp =
      BenchSize(*invocation, bench_cmd, {"--pp", "--pp_size", "--pp-size"}, 1, 1, &args.pp_option);
  if (!pp.ok()) return pp.status();
  Result<int> ep =
      BenchSize(*invocation, bench_cmd, {"--ep", "--ep_size", "--ep-size"}, 0, 0, &args.ep_option);
  if (!ep.ok()) return ep.status();
  args.tp = tp.value();
  args.pp = pp.value();
  args.ep = ep.value();
  return args;
}

Result<std::optional<PerfSanityId>> FindPerfSanityId(std::string_view test_cmd) {
  static const std::string kMarker = "test_e2e[";
  std::string word;
  Result<std::vector<ShellToken>> tokens = TokenizeShell(test_cmd);
  if (tokens.ok()) {
    for (const ShellToken& token : tokens.value()) {
      if (token.kind == ShellToken::kWord && token.text.find(kMarker) != std::string::npos) {
        word = token.text;
        break;
      }
    }
  } else if (test_cmd.find(kMarker) != std::string_view::npos) {
    return tokens.status().WithContext("test_cmd");
  }
  if (word.empty()) return std::optional<PerfSanityId>();
  const std::string accepted =
      "accepted ids: aggr[_upload]-<config>[-<server config name>], "
      "aggr[_upload]-ctx_only-<disaggregated config>, "
      "disagg[_upload]-{e2e|gen_only}-<disaggregated config>";
  size_t open = word.find(kMarker) + kMarker.size();
  size_t close = word.find(']', open);
  if (close == std::string::npos) {
    return Status::InvalidInput("perf-sanity test id '" + word + "' has no closing ']'", accepted);
  }
  PerfSanityId id;
  id.test_string = word;
  id.id = word.substr(open, close - open);
  std::vector<std::string> labels;
  size_t start = 0;
  while (true) {
    size_t dash = id.id.find('-', start);
    labels.push_back(id.id.substr(start, dash == std::string::npos ? dash : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  auto join_from = [&](size_t first) {
    std::string joined;
    for (size_t i = first; i < labels.size(); ++i) joined += (i > first ? "-" : "") + labels[i];
    return joined;
  };
  id.prefix = labels[0];
  if (labels.size() < 2 || labels[1].empty()) {
    return Status::InvalidInput(
        "perf-sanity test id '" + id.id + "' names no config (expected <prefix>-<config>...)",
        accepted);
  }
  if (id.prefix == "disagg" || id.prefix == "disagg_upload") {
    if (labels.size() < 3 || (labels[1] != "e2e" && labels[1] != "gen_only")) {
      return Status::InvalidInput("perf-sanity test id '" + id.id + "': a " + id.prefix +
                                      " id needs a mode e2e or gen_only and a config, got '" +
                                      labels[1] + "'",
                                  accepted);
    }
    id.mode = labels[1];
    id.config = join_from(2);
    id.disaggregated_config = true;
  } else if (id.prefix == "aggr" || id.prefix == "aggr_upload") {
    if (labels[1] == "ctx_only") {
      if (labels.size() < 3) {
        return Status::InvalidInput(
            "perf-sanity test id '" + id.id + "': ctx_only needs a disaggregated config name",
            accepted);
      }
      id.mode = "ctx_only";
      id.config = join_from(2);
      id.disaggregated_config = true;
    } else {
      id.config = labels[1];
      id.select = join_from(2);
    }
  } else {
    return Status::InvalidInput("perf-sanity test id '" + id.id + "' starts with '" + id.prefix +
                                    "'; allowed: aggr, aggr_upload, disagg, disagg_upload",
                                accepted);
  }
  if (id.config.empty()) {
    return Status::InvalidInput("perf-sanity test id '" + id.id + "' names no config", accepted);
  }
  return std::optional<PerfSanityId>(std::move(id));
}

bool IsHuggingFaceId(std::string_view model) {
  if (model.empty() || model.find('/') == std::string_view::npos) return false;
  char first = model.front();
  if (first == '/' || first == '.' || first == '~' || first == '$') return false;
  return model.find("://") == std::string_view::npos;
}

std::optional<std::string> FindModelDirectory(const std::string& root, std::string_view model_id,
                                              int max_depth) {
  std::string wanted(model_id);
  while (!wanted.empty() && wanted.back() == '/') wanted.pop_back();
  size_t slash = wanted.find_last_of('/');
  if (slash != std::string::npos) wanted = wanted.substr(slash + 1);
  wanted = AsciiLower(wanted);
  if (wanted.empty()) return std::nullopt;
  std::vector<fs::path> level = {fs::path(root)};
  for (int depth = 1; depth <= max_depth && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const fs::path& dir : level) {
      std::error_code error;
      fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, error);
      if (error) continue;
      std::vector<fs::path> children;
      for (; it != fs::directory_iterator(); it.increment(error)) {
        if (error) break;
        std::error_code type_error;
        if (it->is_directory(type_error)) children.push_back(it->path());
      }
      std::sort(children.begin(), children.end());
      next.insert(next.end(), children.begin(), children.end());
    }
    for (const fs::path& candidate : next) {
      if (AsciiLower(candidate.filename().string()) == wanted) return candidate.string();
    }
    level = std::move(next);
  }
  return std::nullopt;
}

ModelResolution ResolveHuggingFaceModel(std::string_view model, const std::string& llm_models_root,
                                        const std::string& models_path) {
  ModelResolution resolution;
  if (!IsHuggingFaceId(model)) return resolution;
  const std::string id(model);
  std::vector<std::string> searched;
  std::error_code error;
  if (!llm_models_root.empty() && fs::is_directory(llm_models_root, error)) {
    searched.push_back(llm_models_root);
    if (std::optional<std::string> found = FindModelDirectory(llm_models_root, id)) {
      resolution.path = *found;
      resolution.note =
          "model " + id + ": HuggingFace id resolved to " + *found + " (under llm_models_root)";
      return resolution;
    }
  }
  if (!models_path.empty() && fs::is_directory(models_path, error)) {
    searched.push_back(models_path);
    if (std::optional<std::string> found = FindModelDirectory(models_path, id)) {
      std::string relative = fs::path(*found).lexically_relative(models_path).string();
      resolution.path = llm_models_root.empty()
                            ? *found
                            : (fs::path(llm_models_root) / relative).lexically_normal().string();
      resolution.note = "model " + id + ": HuggingFace id resolved to " + resolution.path +
                        " (found at " + *found + " under models_path)";
      return resolution;
    }
  }
  std::string where;
  for (const std::string& dir : searched) where += (where.empty() ? "" : ", ") + dir;
  // Only the flags not given are asked for; given ones that are no directory here are named.
  std::string missing;
  std::vector<std::string> absent;
  if (llm_models_root.empty()) absent.push_back("--llm-models-root");
  if (models_path.empty()) absent.push_back("--models-path");
  for (const auto& [flag, dir] :
       {std::pair<std::string, std::string>{"--llm-models-root", llm_models_root},
        {"--models-path", models_path}}) {
    if (!dir.empty() && !fs::is_directory(dir, error)) {
      missing += (missing.empty() ? "" : ", ") + flag + " " + dir;
    }
  }
  std::string nothing_to_search = "no models directory exists here to search";
  if (!missing.empty()) nothing_to_search += " (" + missing + ": not a directory on this host)";
  if (!absent.empty()) {
    nothing_to_search += absent.size() == 2 ? " (give --llm-models-root or --models-path)"
                                            : " (give " + absent.front() + ")";
  }
  resolution.note =
      "warning: model " + id + " is a HuggingFace id and " +
      (searched.empty() ? nothing_to_search
                        : "no directory named like it was found within 3 levels of " + where) +
      "; kept as is, so the job will try to download it from HuggingFace";
  return resolution;
}

bool IsBareTestId(std::string_view text) {
  if (text.empty()) return false;
  if (text.substr(0, 9) == "test_e2e[") return text.back() == ']' || text.find(' ') == text.npos;
  std::size_t py = text.find(".py");
  if (py == std::string_view::npos || py == 0) return false;
  const std::string_view path = text.substr(0, py + 3);
  if (path.find_first_of(" \t\n'\"$`;&|<>()") != std::string_view::npos) return false;
  std::string_view rest = text.substr(py + 3);
  if (rest.empty()) return true;
  if (rest.substr(0, 2) != "::") return false;
  // ::Class::test_name, then optional [parameters] running to the end.
  std::size_t bracket = rest.find('[');
  std::string_view names = rest.substr(0, bracket);
  if (names.find_first_of(" \t\n'\"$`;&|<>()") != std::string_view::npos) return false;
  if (bracket == std::string_view::npos) return true;
  return rest.back() == ']' && rest.find('\n') == std::string_view::npos;
}

std::string TestCommandForId(const std::string& id) {
  if (!IsBareTestId(id) && id.find_first_of(" \t") != std::string::npos) return id;
  if (id.rfind("test_e2e[", 0) == 0)
    return "pytest " + ShellQuote("perf/test_perf_sanity.py::" + id);
  return "pytest " + ShellQuote(id);
}

}  // namespace trtllm_run
