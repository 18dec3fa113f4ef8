// Metric lines of perf logs and the CI match key (perf_metrics.h).
#include "perf/perf_metrics.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "model/json_util.h"
#include "trtllm_run/sdk/commands/command_parse.h"

namespace trtllm_run::perf {
namespace {

// benchmark_serving (perf-sanity) and trtllm-bench labels. A label is never a substring
// of another one of this table, so the first match of a line is the only one.
const std::vector<MetricLine> kLines = {
    // perf-sanity: CI's PERF_METRIC_LOG_QUERIES and its spec-decoding query.
    {"Request throughput (req/s)", "seq_throughput", "req/s", true, false},
    {"Output token throughput (tok/s)", "token_throughput", "tok/s", true, true},
    {"Total Token throughput (tok/s)", "total_token_throughput", "tok/s", true, true},
    {"User throughput (tok/s)", "user_throughput", "tok/s", true, false},
    {"Mean TTFT (ms)", "mean_ttft", "ms", false, false},
    {"Median TTFT (ms)", "median_ttft", "ms", false, false},
    {"P99 TTFT (ms)", "p99_ttft", "ms", false, false},
    {"Mean ITL (ms)", "mean_itl", "ms", false, false},
    {"Median ITL (ms)", "median_itl", "ms", false, false},
    {"P99 ITL (ms)", "p99_itl", "ms", false, false},
    {"Mean TPOT (ms)", "mean_tpot", "ms", false, false},
    {"Median TPOT (ms)", "median_tpot", "ms", false, false},
    {"P99 TPOT (ms)", "p99_tpot", "ms", false, false},
    {"Mean E2EL (ms)", "mean_e2el", "ms", false, false},
    {"Median E2EL (ms)", "median_e2el", "ms", false, false},
    {"P99 E2EL (ms)", "p99_e2el", "ms", false, false},
    {"Mean Avg Decoded Tokens per Iter", "al", "tokens", true, true},
    // trtllm-bench's PERFORMANCE OVERVIEW (tensorrt_llm/bench reporting), both spellings
    // of the per-user and per-GPU lines.
    {"Request Throughput (req/sec)", "seq_throughput", "req/s", true, false},
    {"Total Output Throughput (tokens/sec)", "token_throughput", "tok/s", true, true},
    {"Total Token Throughput (tokens/sec)", "total_token_throughput", "tok/s", true, true},
    {"Per User Output Throughput [w/ ctx] (tps/user)", "per_user_output_throughput", "tok/s", true,
     false},
    {"Per User Output Throughput (tokens/sec/user)", "per_user_output_throughput", "tok/s", true,
     false},
    {"Per GPU Output Throughput (tps/gpu)", "per_gpu_output_throughput", "tok/s", true, false},
    {"Per GPU Output Throughput (tokens/sec/gpu)", "per_gpu_output_throughput", "tok/s", true,
     false},
    {"Per User Output Speed [1/TPOT] (tokens/sec/user)", "per_user_output_speed", "tok/s", true,
     false},
    {"Per User Output Speed (tps/user)", "per_user_output_speed", "tok/s", true, false},
    {"Total Latency (ms)", "total_latency", "ms", false, false},
    {"Average request latency (ms)", "mean_request_latency", "ms", false, false},
    {"Average time-to-first-token [TTFT] (ms)", "mean_ttft", "ms", false, false},
    {"Average time-per-output-token [TPOT] (ms)", "mean_tpot", "ms", false, false},
    {"[TTFT] P50", "median_ttft", "ms", false, false},
    {"[TTFT] P99", "p99_ttft", "ms", false, false},
    {"[TPOT] P50", "median_tpot", "ms", false, false},
    {"[TPOT] P99", "p99_tpot", "ms", false, false},
    {"[Latency] P50", "median_request_latency", "ms", false, false},
    {"[Latency] P99", "p99_request_latency", "ms", false, false},
};

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t'; }

// The number at `text[pos]` (CI: -?[\d.]+, plus an exponent), or nullopt.
std::optional<double> NumberAt(std::string_view text, std::size_t pos) {
  std::size_t end = pos;
  if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
  const std::size_t digits_from = end;
  bool digit = false;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    digit = digit || text[end] != '.';
    ++end;
  }
  if (!digit || end == digits_from) return std::nullopt;
  if (end + 1 < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    std::size_t exp = end + 1;
    if (exp < text.size() && (text[exp] == '-' || text[exp] == '+')) ++exp;
    if (exp < text.size() && std::isdigit(static_cast<unsigned char>(text[exp]))) {
      while (exp < text.size() && std::isdigit(static_cast<unsigned char>(text[exp]))) ++exp;
      end = exp;
    }
  }
  const std::string number(text.substr(pos, end - pos));
  char* parsed_end = nullptr;
  const double value = std::strtod(number.c_str(), &parsed_end);
  if (parsed_end == number.c_str()) return std::nullopt;
  return value;
}

// The value after `label` at `at` in `line`: blanks, ':', blanks, a number.
std::optional<double> ValueAfter(std::string_view line, std::size_t at, std::string_view label) {
  std::size_t pos = at + label.size();
  while (pos < line.size() && IsSpaceOrTab(line[pos])) ++pos;
  if (pos >= line.size() || line[pos] != ':') return std::nullopt;
  ++pos;
  while (pos < line.size() && IsSpaceOrTab(line[pos])) ++pos;
  return NumberAt(line, pos);
}

std::string BaseName(std::string_view name) {
  const std::size_t hash = name.find('#');
  return std::string(name.substr(0, hash));
}

}  // namespace

const std::vector<MetricLine>& KnownMetricLines() { return kLines; }

std::optional<MetricLine> MetricInfo(std::string_view name) {
  const std::string base = BaseName(name);
  for (const MetricLine& line : kLines) {
    if (base == line.name) return line;
  }
  return std::nullopt;
}

std::string CleanLogLine(std::string_view line) {
  // What a terminal shows: a '\r' followed by text returns to the line's start.
  std::size_t cr = line.rfind('\r');
  while (cr != std::string_view::npos && cr + 1 == line.size()) {
    line = line.substr(0, cr);
    cr = line.rfind('\r');
  }
  if (cr != std::string_view::npos) line = line.substr(cr + 1);
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c != '\x1b') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= line.size()) break;
    const char kind = line[i + 1];
    if (kind == '[') {  // CSI: parameters and intermediates, then a final byte @..~
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;
    } else if (kind == ']') {  // OSC: up to BEL or ESC backslash
      std::size_t j = i + 2;
      while (j < line.size() && line[j] != '\a' &&
             !(line[j] == '\x1b' && j + 1 < line.size() && line[j + 1] == '\\')) {
        ++j;
      }
      i = (j < line.size() && line[j] == '\x1b') ? j + 1 : j;
    } else {
      i += 1;  // a two-byte escape (ESC 7, ESC =, ...)
    }
  }
  return out;
}

std::vector<PerfMetric> ParsePerfMetrics(std::string_view log) {
  std::vector<PerfMetric> metrics;
  std::set<std::string> in_block;
  int block = 1;
  std::size_t start = 0;
  while (start <= log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view raw = log.substr(start, end - start);
    start = end + 1;
    // Cheap filter: every metric line has a colon; most log lines have none.
    if (raw.find(':') == std::string_view::npos) {
      if (end == log.size()) break;
      continue;
    }
    const std::string line = CleanLogLine(raw);
    for (const MetricLine& known : kLines) {
      const std::size_t at = line.find(known.label);
      if (at == std::string::npos) continue;
      std::optional<double> value = ValueAfter(line, at, known.label);
      if (!value) continue;
      if (in_block.count(known.name)) {
        ++block;
        in_block.clear();
      }
      in_block.insert(known.name);
      PerfMetric metric;
      metric.name = block == 1 ? known.name : std::string(known.name) + "#" + std::to_string(block);
      metric.value = *value;
      metric.unit = known.unit;
      metric.maximize = known.maximize;
      metric.gated = known.gated;
      metrics.push_back(std::move(metric));
      break;
    }
    if (end == log.size()) break;
  }
  return metrics;
}

std::map<std::string, std::string> MatchKeyOf(const RunResult& result,
                                              const std::string& gpu_type) {
  std::map<std::string, std::string> key;
  auto set = [&key](const std::string& name, const std::string& value) {
    if (!value.empty()) key[name] = value;
  };
  set("model", result.model_name);
  set("gpu_type", gpu_type);
  set("workflow", result.workflow_type);
  if (std::optional<Invocation> bench = LastInvocation(result.command, "trtllm-bench")) {
    for (const char* benchmark : {"throughput", "latency", "build"}) {
      if (bench->HasWord(benchmark)) {
        set("benchmark", benchmark);
        break;
      }
    }
    if (Result<BenchArgs> sizes = ParseBenchCommand(result.command); sizes.ok()) {
      set("tp", std::to_string(sizes->tp));
      set("pp", std::to_string(sizes->pp));
      set("ep", std::to_string(sizes->ep));
    }
    auto option = [&](const char* name, std::initializer_list<std::string_view> names,
                      bool base_name) {
      std::optional<std::string> value = bench->Option(names);
      if (!value) return;
      set(name, base_name ? std::filesystem::path(*value).filename().string() : *value);
    };
    option("concurrency", {"--concurrency"}, false);
    option("num_requests", {"--num_requests", "--num-requests"}, false);
    option("max_batch_size", {"--max_batch_size", "--max-batch-size"}, false);
    option("max_num_tokens", {"--max_num_tokens", "--max-num-tokens"}, false);
    option("backend", {"--backend"}, false);
    option("dataset", {"--dataset"}, true);
    option("server_config", {"--extra_llm_api_options", "--config"}, true);
  }
  if (Result<std::optional<PerfSanityId>> id = FindPerfSanityId(result.command);
      id.ok() && id->has_value()) {
    set("test_id", (*id)->id);
  }
  return key;
}

std::string MatchKeyText(const std::map<std::string, std::string>& key) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  for (const auto& [name, value] : key) {
    const std::string n = json::ValidUtf8(name);
    const std::string v = json::ValidUtf8(value);
    w.Key(n.data(), static_cast<rapidjson::SizeType>(n.size()));
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace trtllm_run::perf
