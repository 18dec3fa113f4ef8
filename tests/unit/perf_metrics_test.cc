// Perf metrics from logs of the two tools' real formats (perf_metrics.h): benchmark_serving's
// summary (perf-sanity) and trtllm-bench's PERFORMANCE OVERVIEW, written by this test with
// seeded values, ANSI colours, progress bars, rank prefixes and interleaved noise, then
// read back from the file: every metric line's value must come back exactly.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "perf/perf_metrics.h"
#include "plan_test_support.h"
#include "trtllm_run/sdk/input_limits.h"

namespace trtllm_run::perf {
namespace {

using plan_test::TempDir;

struct Written {
  std::string name;
  double value;
};

// A number as the tools print it: 0 to 4 decimals (CI's regex takes -?[\d.]+).
std::string Printed(std::mt19937* rng, double magnitude) {
  std::uniform_real_distribution<double> value(0, magnitude);
  std::uniform_int_distribution<int> decimals(0, 4);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals(*rng), value(*rng));
  return buffer;
}

// Noise a real run interleaves: other ranks, tqdm bars rewritten with '\r', warnings with
// colons, lines that name a metric without a value.
std::string Noise(std::mt19937* rng) {
  static const char* kNoise[] = {
      "[TensorRT-LLM][INFO] Loaded engine: 1.2 GiB",
      "\x1b[33m[W] rank 3: NCCL_P2P_LEVEL not set: using default\x1b[0m",
      ("Processed prompts:  45%|####5     | 45/100 [00:03<00:04, 12.1it/s]\rProcessed prompts:  "
       "90%|######### | 90/100 [00:07<00:00, 12.9it/s]\r"),
      "[1,3]<stdout>: iter = 12, host_step_time = 6.79ms, prev_device_step_time = 6.94ms",
      "grep 'Total Token throughput (tok/s):' bench.log",
      "Total Token throughput (tok/s): N/A",
      "2026-12-01 10:00:00,123 - INFO - Mean: TTFT will be printed below",
      "",
  };
  std::uniform_int_distribution<std::size_t> pick(0, sizeof(kNoise) / sizeof(kNoise[0]) - 1);
  return kNoise[pick(*rng)];
}

// One metric line in one of the dressings a log gives it.
std::string Dressed(std::mt19937* rng, const std::string& label, const std::string& number,
                    const std::string& separator) {
  std::uniform_int_distribution<int> style(0, 5);
  const std::string plain = label + separator + number;
  switch (style(*rng)) {
    case 0:
      return plain;
    case 1:
      if (separator.front() != ':') return plain;
      return "\x1b[32m" + label + ":\x1b[0m" + separator.substr(1) + "\x1b[1m" + number + "\x1b[0m";
    case 2:
      return "[1,0]<stdout>:" + plain;
    case 3:
      return "0: " + plain + "\r";
    case 4:
      return "Processed: 99%\r\x1b[2K" + plain;
    default:
      return "2026-12-01T10:00:00Z " + plain + "   ";
  }
}

// Writes a log of `blocks` summaries of `kind` ("serving" or "bench"), returns the values.
std::vector<Written> WriteLog(const std::string& path, const std::string& kind, int blocks,
                              unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Written> written;
  std::ofstream out(path, std::ios::binary);
  for (int block = 1; block <= blocks; ++block) {
    for (int i = 0; i < 5; ++i) out << Noise(&rng) << "\n";
    if (kind == "serving") {
      out << "============ Serving Benchmark Result ============\n"
          << "Successful requests:                     512\n"
          << "Benchmark duration (s):                  93.21\n";
    } else {
      out << "===========================================================\n"
          << "= PERFORMANCE OVERVIEW\n"
          << "===========================================================\n";
    }
    for (const MetricLine& line : KnownMetricLines()) {
      const bool serving_line = &line - KnownMetricLines().data() < 17;
      if (serving_line != (kind == "serving")) continue;
      const std::string name =
          block == 1 ? line.name : std::string(line.name) + "#" + std::to_string(block);
      // A tool prints one spelling of a line (each spelling is another release's): the
      // test writes a name's first spelling only.
      bool seen = false;
      for (const Written& w : written) seen = seen || w.name == name;
      if (seen) continue;
      const std::string number = Printed(&rng, line.maximize ? 90000 : 2000);
      // trtllm-bench pads with blanks and tabs; its breakdown lines pad before the colon.
      const std::string separator =
          std::string(line.label).front() == '[' ? "    : " : (kind == "bench" ? ":\t  " : ":   ");
      out << Dressed(&rng, line.label, number, separator) << "\n";
      written.push_back({name, std::strtod(number.c_str(), nullptr)});
      if (rng() % 3 == 0) out << Noise(&rng) << "\n";
    }
  }
  return written;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("perf metrics: every metric line of written serving and bench logs comes back exact",
          "[perf]") {
  TempDir dir("trtllm_perf_logs");
  int lines = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    for (const char* kind : {"serving", "bench"}) {
      const int blocks = 1 + static_cast<int>(seed % 3);
      const std::string path = dir.path() + "/" + kind + std::to_string(seed) + ".log";
      std::vector<Written> written = WriteLog(path, kind, blocks, seed);
      std::vector<PerfMetric> parsed = ParsePerfMetrics(ReadAll(path));
      INFO(kind << " seed " << seed << " log " << ReadAll(path));
      REQUIRE(parsed.size() == written.size());
      for (std::size_t i = 0; i < written.size(); ++i) {
        CHECK(parsed[i].name == written[i].name);
        CHECK(parsed[i].value == written[i].value);  // exact: the same digits
        ++lines;
      }
    }
  }
  CHECK(lines > 1000);
}

TEST_CASE("perf metrics: directions, units and the gated defaults follow CI", "[perf]") {
  std::vector<PerfMetric> parsed = ParsePerfMetrics(
      "Output token throughput (tok/s):   100.5\n"
      "Total Token throughput (tok/s):    200\n"
      "Mean TTFT (ms):                    12.25\n"
      "Mean Avg Decoded Tokens per Iter:  2.75\n");
  REQUIRE(parsed.size() == 4);
  CHECK((parsed[0].gated && parsed[0].maximize && parsed[0].unit == "tok/s"));
  CHECK((parsed[1].name == "total_token_throughput" && parsed[1].gated));
  CHECK((parsed[2].name == "mean_ttft" && !parsed[2].maximize && !parsed[2].gated));
  CHECK((parsed[3].name == "al" && parsed[3].gated && parsed[3].value == 2.75));
  // A label without a number, or a number without the colon, is no metric.
  CHECK(ParsePerfMetrics("Total Token throughput (tok/s) 123\nMean TTFT (ms): fast\n").empty());
  CHECK(ParsePerfMetrics("").empty());
}

TEST_CASE("perf metrics: ANSI sequences and carriage returns are what a terminal shows", "[perf]") {
  CHECK(CleanLogLine("\x1b[1;32mok\x1b[0m") == "ok");
  CHECK(CleanLogLine("a\x1b]0;title\a"
                     "b") == "ab");
  CHECK(CleanLogLine("old text\rnew") == "new");
  CHECK(CleanLogLine("kept\r\r") == "kept");
  CHECK(CleanLogLine("\x1b") == "");
}

TEST_CASE("perf match key: a trtllm-bench command names its configuration", "[perf]") {
  RunResult result;
  result.model_name = "llama_3_1_8b";
  result.workflow_type = "bench";
  result.command =
      "trtllm-bench --model /m/Llama-3.1-8B throughput --tp 2 --ep 2 --concurrency 64 "
      "--dataset /data/synthetic_1k.txt --extra_llm_api_options /cfg/llm_options.yml";
  std::map<std::string, std::string> key = MatchKeyOf(result, "H100");
  CHECK(key["model"] == "llama_3_1_8b");
  CHECK(key["gpu_type"] == "H100");
  CHECK(key["benchmark"] == "throughput");
  CHECK(key["tp"] == "2");
  CHECK(key["pp"] == "1");
  CHECK(key["ep"] == "2");
  CHECK(key["concurrency"] == "64");
  CHECK(key["dataset"] == "synthetic_1k.txt");
  CHECK(key["server_config"] == "llm_options.yml");
  CHECK(MatchKeyText({{"b", "2"}, {"a", "x\"y"}}) == "{\"a\":\"x\\\"y\",\"b\":\"2\"}");
  // Another concurrency is another case.
  RunResult other = result;
  other.command += " --concurrency 8";
  CHECK(MatchKeyText(MatchKeyOf(other, "H100")) != MatchKeyText(key));
}

}  // namespace
}  // namespace trtllm_run::perf
