// CI's perf baseline and gate (perf_gate.h), the pinned baseline file (perf_case.h), the
// perf section of result.json and the history's perf points.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "history/history_store.h"
#include "perf/perf_case.h"
#include "perf/perf_gate.h"
#include "plan_test_support.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::perf {
namespace {

using plan_test::TempDir;

PerfMetric Metric(const std::string& name, double value, bool maximize = true, bool gated = true) {
  PerfMetric metric;
  metric.name = name;
  metric.value = value;
  metric.maximize = maximize;
  metric.gated = gated;
  return metric;
}

TEST_CASE("perf baseline: daily mean, trailing mean of 3, P95 or P5", "[perf]") {
  // Days 1..5 (day 2 has two points: mean 20); daily 10 20 30 40 50;
  // smoothed 10 15 20 30 40; P95 = 30 + 0.8 * 10 = 38; P5 = 10 + 0.2 * 5 = 11.
  std::vector<TimedValue> points = {{"2026-11-01T10:00:00Z", 10}, {"2026-11-02T01:00:00Z", 15},
                                    {"2026-11-02T23:00:00Z", 25}, {"2026-11-03T00:00:00Z", 30},
                                    {"2026-11-05T00:00:00Z", 50}, {"2026-11-04T12:00:00Z", 40}};
  CHECK(Baseline(points, true).value() == Approx(38).epsilon(1e-12));
  CHECK(Baseline(points, false).value() == Approx(11).epsilon(1e-12));
  CHECK_FALSE(Baseline({}, true).has_value());
  CHECK(Percentile({5}, 95) == 5);
}

TEST_CASE("perf gate: thresholds by mode, pinned overrides, no history no gate", "[perf]") {
  GateInput input;
  input.mode = "post-merge";
  input.measured = {Metric("total_token_throughput", 940), Metric("mean_ttft", 200, false, false)};
  input.measured_at = "2026-12-02T10:00:00Z";
  PerfGate none = EvaluateGate(input);
  CHECK_FALSE(none.regressed);
  CHECK(none.rows.empty());
  REQUIRE(none.notes.size() == 1);
  CHECK_THAT(none.notes[0], Catch::Contains("no baseline"));

  // A history of 1000 on one day: the baseline with the new point is (1000 * 3 + 940) / 4.
  input.history["total_token_throughput"] = {{"2026-12-02T09:00:00Z", 1000},
                                             {"2026-12-02T09:10:00Z", 1000},
                                             {"2026-12-02T09:20:00Z", 1000}};
  input.history["mean_ttft"] = {{"2026-12-02T09:00:00Z", 100}};
  PerfGate post = EvaluateGate(input);
  REQUIRE(post.rows.size() == 2);
  CHECK(post.rows[0].baseline == Approx(985));
  CHECK(post.rows[0].threshold == 0.05);
  CHECK_FALSE(post.rows[0].regressed);  // 940 >= 985 * 0.95 = 935.75
  CHECK_FALSE(post.rows[1].regressed);  // not gated, though 50 % slower
  CHECK(post.rows[1].change == Approx(200.0 / 150 - 1));
  input.measured[0].value = 900;
  PerfGate regressed = EvaluateGate(input);
  CHECK(regressed.regressed);
  CHECK(regressed.rows[0].regressed);
  input.mode = "pre-merge";  // 10 %: 900 >= 975 * 0.9
  CHECK_FALSE(EvaluateGate(input).regressed);
  // A pinned baseline does not drift with the history; a pinned threshold wins.
  input.pinned["total_token_throughput"].baseline = 1200;
  input.pinned["total_token_throughput"].threshold_pre_merge = 0.2;
  input.pinned_file = true;
  PerfGate pinned = EvaluateGate(input);
  CHECK(pinned.rows[0].baseline == 1200);
  CHECK(pinned.rows[0].threshold == 0.2);
  CHECK(pinned.regressed);  // 900 < 1200 * 0.8
}

TEST_CASE("perf gate: pre-merge exemption when the latest post-merge misses the gate too",
          "[perf]") {
  GateInput input;
  input.mode = "pre-merge";
  input.measured = {Metric("token_throughput", 800)};
  input.measured_at = "2026-12-02T10:00:00Z";
  input.history["token_throughput"] = {{"2026-11-30T00:00:00Z", 1000},
                                       {"2026-12-01T00:00:00Z", 1000}};
  PerfGate armed = EvaluateGate(input);
  CHECK(armed.regressed);
  CHECK_FALSE(armed.exempt);
  input.latest_post_merge["token_throughput"] = 850;  // main is > 10 % off too
  PerfGate exempt = EvaluateGate(input);
  CHECK(exempt.regressed);
  CHECK(exempt.exempt);
  // Unusable records leave the gate armed.
  for (double unusable : {0.0, -5.0, std::nan("")}) {
    input.latest_post_merge["token_throughput"] = unusable;
    CHECK_FALSE(EvaluateGate(input).exempt);
  }
  input.latest_post_merge["token_throughput"] = 990;  // main within the threshold
  CHECK_FALSE(EvaluateGate(input).exempt);
  input.mode = "post-merge";  // no exemption outside pre-merge
  input.latest_post_merge["token_throughput"] = 500;
  CHECK_FALSE(EvaluateGate(input).exempt);
}

TEST_CASE("perf baseline file: the format, and each mistake named", "[perf]") {
  TempDir dir("trtllm_perf_baseline");
  const std::string path = dir.path() + "/baseline.json";
  REQUIRE(WriteFileAtomic(path,
                          R"({"version": 1, "entries": [{"match_key": {"model": "m"},
                              "metrics": {"total_token_throughput": {"baseline": 1000,
                              "threshold_post_merge": 0.03}}}]})")
              .ok());
  Result<BaselineFile> file = LoadBaselineFile(path);
  REQUIRE(file.ok());
  REQUIRE(file->entries.size() == 1);
  CHECK(file->entries[0].match_key.at("model") == "m");
  CHECK(file->entries[0].metrics.at("total_token_throughput").baseline.value() == 1000);
  CHECK(file->entries[0].metrics.at("total_token_throughput").threshold_post_merge.value() == 0.03);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"version": 2, "entries": []})", "\"version\" must be 1"},
      {R"({"version": 1})", "\"entries\" must be a list"},
      {R"({"version": 1, "entries": [], "extra": 1})", "unknown key 'extra'"},
      {R"({"version": 1, "entries": [{"metrics": {"tput": {}}}]})",
       "entries[0].metrics.tput: no tool prints"},
      {R"({"version": 1, "entries": [{"metrics": {"al": {"baseline": -1}}}]})",
       "entries[0].metrics.al.baseline must be a number > 0"},
      {R"({"version": 1, "entries": [{"metrics": {"al": {"threshold_pre_merge": 5}}}]})",
       "must be a number > 0 and < 1"},
      {R"({"version": 1, "entries": [{"metrics": {"al": {"base": 5}}}]})", "unknown key 'base'"},
      {"{not json", "--perf-baseline"},
  };
  for (const auto& [text, message] : bad) {
    REQUIRE(WriteFileAtomic(path, text).ok());
    Result<BaselineFile> loaded = LoadBaselineFile(path);
    INFO(text);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().code() == StatusCode::kInvalidInput);
    CHECK_THAT(loaded.status().message(), Catch::Contains(message));
    CHECK_THAT(loaded.status().message(), Catch::Contains(path));
  }
  CHECK_FALSE(LoadBaselineFile(dir.path() + "/missing.json").ok());
  CHECK(CheckGateMode("warn").ok());
  CHECK_THAT(CheckGateMode("strict").hint(), Catch::Contains("pre-merge"));
}

TEST_CASE("perf section: result.json keeps every digit and reads back", "[perf][result]") {
  RunResult result;
  result.status = RunStatus::kFailed;
  result.work_dir = "/w";
  PerfSection perf;
  perf.metrics = {Metric("total_token_throughput", 94022.5497),
                  Metric("mean_ttft", 52667.0339123, false, false)};
  perf.match_key = {{"model", "m"}, {"tp", "2"}};
  PerfGate gate;
  gate.mode = "post-merge";
  gate.regressed = true;
  gate.baseline_source = "history /h.sqlite";
  gate.rows.push_back(
      {"total_token_throughput", 94022.5497, 110000.125, 0.05, -0.1452, true, true});
  perf.gate = gate;
  perf.history["total_token_throughput"] = {{"2026-12-01T10:00:00Z", 110000.125}};
  result.perf = perf;
  const std::string text = ResultToJson(result);
  CHECK_THAT(text, Catch::Contains("94022.5497"));
  CHECK_THAT(text, Catch::Contains("52667.0339123"));
  CHECK_THAT(text, Catch::Contains("\"direction\": \"minimize\""));
  Result<RunResult> back = ResultFromJson(text, "result.json");
  REQUIRE(back.ok());
  REQUIRE(back->perf.has_value());
  CHECK(back->perf->metrics[0].value == 94022.5497);
  CHECK_FALSE(back->perf->metrics[1].maximize);
  CHECK(back->perf->match_key == perf.match_key);
  REQUIRE(back->perf->gate.has_value());
  CHECK(back->perf->gate->rows[0].change == -0.1452);
  CHECK(back->perf->gate->rows[0].regressed);
  CHECK(back->perf->history == perf.history);
  // A result without perf writes no key: not a perf case.
  result.perf.reset();
  CHECK(ResultToJson(result).find("\"perf\"") == std::string::npos);
}

TEST_CASE("history store: perf points by match key and time, pre-merge flagged",
          "[perf][history]") {
  TempDir dir("trtllm_perf_history");
  Result<std::unique_ptr<history::HistoryStore>> store =
      history::OpenSqliteStore(dir.path() + "/h.sqlite");
  REQUIRE(store.ok());
  std::vector<history::PerfPointRecord> points;
  for (int day = 1; day <= 3; ++day) {
    history::PerfPointRecord point;
    point.recorded_at = "2026-11-0" + std::to_string(day) + "T10:00:00Z";
    point.match_key = day == 3 ? "{\"model\":\"other\"}" : "{\"model\":\"m\"}";
    point.metric = "total_token_throughput";
    point.value = 1000.5 + day;
    point.pre_merge = day == 2;
    point.work_dir = "/w" + std::to_string(day);
    points.push_back(point);
  }
  REQUIRE(store.value()->RecordPerf(points).ok());
  Result<std::vector<history::PerfPointRecord>> read =
      store.value()->PerfPoints("{\"model\":\"m\"}", "");
  REQUIRE(read.ok());
  REQUIRE(read->size() == 2);
  CHECK(read->at(0).value == 1001.5);
  CHECK_FALSE(read->at(0).pre_merge);
  CHECK(read->at(1).pre_merge);
  CHECK(read->at(1).work_dir == "/w2");
  Result<std::vector<history::PerfPointRecord>> since =
      store.value()->PerfPoints("{\"model\":\"m\"}", "2026-11-02");
  REQUIRE(since.ok());
  CHECK(since->size() == 1);
}

}  // namespace
}  // namespace trtllm_run::perf
