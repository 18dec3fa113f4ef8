// The pieces of CI stage planning: the stage table of L0_Test.groovy, the keys a stage's
// name gives (getMakoArgsFromStageName), the test-db conditions (terms, ranges,
// wildcards) and pytest-split's least_duration. The fixtures are written here in
// TensorRT-LLM's shapes, not copied from the repo.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "stage/least_duration.h"
#include "stage/stage_table.h"
#include "stage/test_db_render.h"

namespace trtllm_run {
namespace {

using Keys = std::map<std::string, std::string>;

TEST_CASE("stage keys: derived from real stage names as getMakoArgsFromStageName does", "[stage]") {
  CHECK(MatchKeysFromStageName("DGX_B200-4_GPUs-PyTorch-1") == Keys{{"stage", "pre_merge"},
                                                                    {"backend", "pytorch"},
                                                                    {"auto_trigger", "others"},
                                                                    {"orchestrator", "mpi"},
                                                                    {"gpu", "dgx_b200"},
                                                                    {"system_gpu_count", "4"}});
  // No _GPUs part: gpu and system_gpu_count are the target's, not the name's.
  CHECK(MatchKeysFromStageName("A10-PyTorch-Post-Merge-2") == Keys{{"stage", "post_merge"},
                                                                   {"backend", "pytorch"},
                                                                   {"auto_trigger", "others"},
                                                                   {"orchestrator", "mpi"}});
  CHECK(MatchKeysFromStageName("GB200-8_GPUs-2_Nodes-PyTorch-Post-Merge-1") ==
        Keys{{"stage", "post_merge"},
             {"backend", "pytorch"},
             {"auto_trigger", "others"},
             {"orchestrator", "mpi"},
             {"gpu", "gb200"},
             {"system_gpu_count", "8"}});
  Keys ray = MatchKeysFromStageName("DGX_H100-4_GPUs-PyTorch-Ray-1");
  CHECK(ray["orchestrator"] == "ray");
  CHECK(MatchKeysFromStageName("DGX_H100-4_GPUs-PyTorch-DeepSeek-2")["auto_trigger"] == "deepseek");
  CHECK(MatchKeysFromStageName("DGX_H100-2_GPUs-PyTorch-GptOss-1")["auto_trigger"] == "gpt_oss");
  CHECK(MatchKeysFromStageName("H100_PCIe-TensorRT-Post-Merge-3")["backend"] == "tensorrt");
  CHECK(MatchKeysFromStageName("A30-CPP-1")["backend"] == "cpp");
  CHECK(MatchKeysFromStageName("A30-Triton-Post-Merge-1")["backend"] == "triton");
  CHECK(MatchKeysFromStageName("A10-FMHA-Post-Merge-1")["backend"] == "fmha");
  CHECK(MatchKeysFromStageName("B200_PCIe-AutoDeploy-1")["backend"] == "autodeploy");
  // "-PyTorch-" needs its dashes: a trailing word is no backend; the first backend wins.
  CHECK(MatchKeysFromStageName("A10-Build_Docs").count("backend") == 0);
  CHECK(MatchKeysFromStageName("X-PyTorch-TensorRT-1")["backend"] == "pytorch");
  CHECK(StageGpuSegment("DGX_B200-4_GPUs-PyTorch-1") == "DGX_B200");
}

TEST_CASE("stage table: entries, buildStageConfigs, comments and non-stage maps", "[stage]") {
  const std::string groovy = R"(
def buildStageConfigs(stageName, platform, testlist, testCount, gpuCount, nodeCount) {
    configs[key] = [platform, testlist, k, testCount, gpuCount, nodeCount]
}
    x86TestConfigs = [
        "A10-PyTorch-1": ["a10", "l0_a10", 1, 2],
        // "A10-PyTorch-2": ["a10", "l0_a10", 2, 2],
        "A10-PyTorch-2": ["a10", "l0_a10", 2, 2], // the live one
        /* "A10-CPP-1": ["a10", "l0_a10", 1, 1], */
        "DGX_B200-4_GPUs-PyTorch-1": ["b200-x4", "l0_dgx_b200", 1, 1, 4, 1, true],
        "GB200-8_GPUs-2_Nodes-PyTorch-1": ["gb200", "l0_gb200_multi_nodes",
                                           1, 1, 8, 2],
        "A10-PyTorch-1": ["other", "l0_other", 1, 1],
        "PY312-DLFW": [LLM_DOCKER_IMAGE, "B200_PCIe", X86_64_TRIPLE, false],
        "A10-Build_Docs": [docBuildSpec, { runLLMDocBuild() }],
        "Bad-Split-3": ["a10", "l0_a10", 3, 2],
    ]
    configs += buildStageConfigs(
        "GB200-12_GPUs-3_Nodes-PyTorch-Post-Merge",
        "gb200-flex",
        "l0_gb200_three",
        2,
        12,
        3
    )
    echo "see https://x.invalid//y \"Z-1\": [\"a\", \"b\", 1, 1]"
)";
  std::vector<StageEntry> table = ReadStageTable(groovy);
  std::vector<std::string> names;
  for (const StageEntry& entry : table) names.push_back(entry.name);
  CHECK(names == std::vector<std::string>{
                     "A10-PyTorch-1", "A10-PyTorch-2", "DGX_B200-4_GPUs-PyTorch-1",
                     "GB200-8_GPUs-2_Nodes-PyTorch-1", "GB200-12_GPUs-3_Nodes-PyTorch-Post-Merge-1",
                     "GB200-12_GPUs-3_Nodes-PyTorch-Post-Merge-2"});
  REQUIRE(table.size() == 6);
  CHECK(table[0].context == "l0_a10");  // the first of a name given twice
  CHECK(table[0].split_count == 2);
  CHECK(table[0].gpu_count == 1);
  CHECK(table[1].split_id == 2);
  CHECK(table[1].line == 8);
  CHECK(table[2].gpu_count == 4);
  CHECK(table[2].node_count == 1);
  CHECK(table[3].gpu_count == 8);
  CHECK(table[3].node_count == 2);
  CHECK(table[5].context == "l0_gb200_three");
  CHECK(table[5].split_id == 2);
  CHECK(table[5].split_count == 2);
  CHECK(table[5].gpu_count == 12);
  CHECK(table[5].node_count == 3);
}

const char kDb[] = R"(version: 0.0.1
l0_x:
- condition:
    terms:
      stage: pre_merge
      supports_fp8: true
  tests:
  - a/test_terms.py::test_t
- condition:
    ranges:
      system_gpu_count:
        gte: 2
        lte: 4
  tests:
  - a/test_range.py::test_r
- condition:
    ranges:
      system_gpu_count:
        gte: 8
  tests:
  - a/test_range.py::test_gte_only
- condition:
    ranges:
      system_gpu_count:
        lte: 1
  tests:
  - a/test_range.py::test_lte_only
- condition:
    wildcards:
      gpu:
      - '*h100*'
      - '*B200*'
  tests:
  - a/test_wild.py::test_list
- condition:
    wildcards:
      gpu: 'a1?'
  tests:
  - a/test_wild.py::test_one
- tests:
  - a/test_plain.py::test_no_condition TIMEOUT (30)
)";

std::vector<std::string> Rendered(const Keys& keys) {
  Result<RenderedTestDb> rendered = RenderTestDb(kDb, "l0_x.yml", "l0_x", keys);
  INFO((rendered.ok() ? std::string() : rendered.status().ToString()));
  REQUIRE(rendered.ok());
  std::vector<std::string> ids;
  for (const RenderedTest& test : rendered->tests) ids.push_back(test.line.id);
  return ids;
}

TEST_CASE("test-db render: terms", "[stage]") {
  // Equal values match; a boolean term matches true/True; an unknown key is assumed to.
  CHECK(Rendered({{"stage", "pre_merge"}, {"supports_fp8", "True"}, {"gpu", "x"}})[0] ==
        "a/test_terms.py::test_t");
  std::vector<std::string> other = Rendered({{"stage", "post_merge"}, {"gpu", "x"}});
  CHECK(std::find(other.begin(), other.end(), "a/test_terms.py::test_t") == other.end());
  // Terms compare exactly (no case folding outside booleans).
  std::vector<std::string> upper = Rendered({{"stage", "PRE_MERGE"}, {"gpu", "x"}});
  CHECK(std::find(upper.begin(), upper.end(), "a/test_terms.py::test_t") == upper.end());
  std::vector<std::string> no_fp8 =
      Rendered({{"stage", "pre_merge"}, {"supports_fp8", "false"}, {"gpu", "x"}});
  CHECK(std::find(no_fp8.begin(), no_fp8.end(), "a/test_terms.py::test_t") == no_fp8.end());
}

TEST_CASE("test-db render: ranges gte/lte inclusive, either bound alone", "[stage]") {
  auto has = [](const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (int count : {0, 1, 2, 4, 5, 8, 9}) {
    INFO("system_gpu_count=" << count);
    std::vector<std::string> ids =
        Rendered({{"system_gpu_count", std::to_string(count)}, {"gpu", "x"}, {"stage", "s"}});
    CHECK(has(ids, "a/test_range.py::test_r") == (count >= 2 && count <= 4));
    CHECK(has(ids, "a/test_range.py::test_gte_only") == (count >= 8));
    CHECK(has(ids, "a/test_range.py::test_lte_only") == (count <= 1));
  }
  // A value that is not a number is outside every range.
  std::vector<std::string> ids = Rendered({{"system_gpu_count", "four"}, {"gpu", "x"}});
  CHECK_FALSE(has(ids, "a/test_range.py::test_r"));
  CHECK_FALSE(has(ids, "a/test_range.py::test_lte_only"));
}

TEST_CASE("test-db render: wildcards, a list or one pattern, case-insensitive", "[stage]") {
  auto has = [](const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  CHECK(has(Rendered({{"gpu", "dgx_b200"}}), "a/test_wild.py::test_list"));
  CHECK(has(Rendered({{"gpu", "H100_PCIe"}}), "a/test_wild.py::test_list"));
  CHECK_FALSE(has(Rendered({{"gpu", "a100"}}), "a/test_wild.py::test_list"));
  CHECK(has(Rendered({{"gpu", "A10"}}), "a/test_wild.py::test_one"));
  CHECK_FALSE(has(Rendered({{"gpu", "a100"}}), "a/test_wild.py::test_one"));
  // A block without a condition always matches; its markers come along.
  Result<RenderedTestDb> rendered = RenderTestDb(kDb, "l0_x.yml", "l0_x", {{"gpu", "zz"}});
  REQUIRE(rendered.ok());
  REQUIRE(!rendered->tests.empty());
  CHECK(rendered->tests.back().line.timeout_minutes == 30);
  CHECK(rendered->tests.back().origin == "l0_x.yml:41");
}

TEST_CASE("test-db render: the explanation says which blocks matched and why", "[stage]") {
  Result<RenderedTestDb> rendered =
      RenderTestDb(kDb, "db/l0_x.yml", "l0_x", {{"system_gpu_count", "4"}, {"gpu", "dgx_b200"}});
  REQUIRE(rendered.ok());
  const std::vector<std::string>& lines = rendered->explained;
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] ==
        "block 1 (l0_x.yml:3, 1 test): matched; not known here, assumed to match: stage, "
        "supports_fp8");
  CHECK(lines[1] == "block 2 (l0_x.yml:9, 1 test): matched: system_gpu_count=4 in [2, 4]");
  CHECK(lines[2] ==
        "block 3 (l0_x.yml:16, 1 test): not matched: system_gpu_count=4 not in [8, inf]");
  CHECK(lines[4] ==
        "block 5 (l0_x.yml:28, 1 test): matched: gpu=dgx_b200 matches '*h100*', '*B200*'");
  CHECK(lines[5] ==
        "block 6 (l0_x.yml:35, 1 test): not matched: gpu=dgx_b200 matches none of "
        "'a1?'");
  CHECK(lines[6] == "block 7 (l0_x.yml:40, 1 test): matched: no condition");
}

TEST_CASE("test-db render: malformed conditions and lines are exit-2 errors", "[stage]") {
  auto error = [](const std::string& yaml) {
    Result<RenderedTestDb> rendered = RenderTestDb(yaml, "f.yml", "l0_x", {{"gpu", "a"}});
    REQUIRE_FALSE(rendered.ok());
    CHECK(rendered.status().code() == StatusCode::kInvalidInput);
    return rendered.status().ToString();
  };
  CHECK_THAT(error("l0_x:\n- condition:\n    exact:\n      gpu: a\n  tests: [a.py::t]\n"),
             Catch::Contains("f.yml:3: condition kind 'exact' is not one of terms, ranges, "
                             "wildcards"));
  CHECK_THAT(
      error("l0_x:\n- condition:\n    ranges:\n      n:\n        gt: 2\n  tests: [a.py::t]\n"),
      Catch::Contains("bound 'gt' is not gte or lte"));
  CHECK_THAT(error("l0_x:\n- condition:\n    ranges:\n      n:\n        gte: two\n  tests: []\n"),
             Catch::Contains("ranges.n.gte must be a whole number"));
  CHECK_THAT(error("l0_x:\n- condition:\n    terms:\n      gpu: [a, b]\n  tests: []\n"),
             Catch::Contains("terms.gpu must be one value"));
  CHECK_THAT(error("l0_y:\n- tests: [a.py::t]\n"), Catch::Contains("has no `l0_x:` list"));
  CHECK_THAT(error("l0_x:\n- tests:\n  - a.py::t TIMEOUT (x)\n"),
             Catch::Contains("f.yml:3: test-list line 'a.py::t TIMEOUT (x)'"));
  CHECK_THAT(error("l0_x:\n- tests:\n  - pytest a.py\n"), Catch::Contains("is not a test id"));
  CHECK_THAT(error("l0_x: [\n"), Catch::Contains("not YAML"));
}

TEST_CASE("test-db render: each test's CI node id, the key of .test_durations", "[stage]") {
  // As test_list_parser.py: the text before the first marker, as written; unittests wrapped.
  CHECK(CiNodeId("unittest/x.py -k 'a or b'  TIMEOUT (5) ISOLATION") ==
        "test_unittests.py::test_unittests_v2[unittest/x.py -k 'a or b']");
  CHECK(CiNodeId("full:B200/accuracy/a.py::T::t[x y] SKIP (https://nvbugs/1)") ==
        "accuracy/a.py::T::t[x y]");
  CHECK(CiNodeId("  examples/e.py::t[p] ISOLATION TIMEOUT (9)") == "examples/e.py::t[p]");
  Result<RenderedTestDb> rendered = RenderTestDb(
      "l0_x:\n- tests:\n  - unittest/u.py -m \"gpu4\" ISOLATION\n", "f.yml", "l0_x", {});
  REQUIRE(rendered.ok());
  REQUIRE(rendered->tests.size() == 1);
  CHECK(rendered->tests[0].node_id ==
        "test_unittests.py::test_unittests_v2[unittest/u.py -m \"gpu4\"]");
  CHECK(TestListKey(rendered->tests[0].line) == "unittest/u.py -m \"gpu4\"");
}

TEST_CASE("least_duration: hand-computed groups, ties as pytest-split breaks them", "[stage]") {
  // Durations 5, 4, 3, 3, 2, 2 over 2 groups (ids chosen so that id order differs from
  // list order): sorted d(5) a(4) b(3) e(3) c(2) f(2) -- equal durations by id.
  // d->G0 5; a->G1 4; b->G1 7; e->G0 8; c->G1 9; f->G0 10.
  const std::vector<std::string> ids = {"e", "c", "a", "d", "b", "f"};
  const std::map<std::string, double> durations = {{"a", 4}, {"b", 3}, {"c", 2},
                                                   {"d", 5}, {"e", 3}, {"f", 2}};
  std::vector<SplitGroup> groups = LeastDurationSplit(ids, durations, 2);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].items == std::vector<std::size_t>{0, 3, 5});  // e d f in list order
  CHECK(groups[0].seconds == 10);
  CHECK(groups[1].items == std::vector<std::size_t>{1, 2, 4});  // c a b
  CHECK(groups[1].seconds == 9);
  // Equal totals go to the lower group: 3 tests of 1 s in 3 groups, one each, by id.
  groups = LeastDurationSplit({"z", "y", "x"}, {{"x", 1}, {"y", 1}, {"z", 1}}, 3);
  CHECK(groups[0].items == std::vector<std::size_t>{2});
  CHECK(groups[1].items == std::vector<std::size_t>{1});
  CHECK(groups[2].items == std::vector<std::size_t>{0});
}

TEST_CASE("least_duration: unknown tests at the mean of the listed known ones", "[stage]") {
  // "irrelevant" is not listed: it does not count in the mean ((6 + 2) / 2 = 4).
  std::vector<double> seconds;
  std::vector<SplitGroup> groups = LeastDurationSplit(
      {"p", "q", "new"}, {{"p", 6}, {"q", 2}, {"irrelevant", 1000}}, 2, &seconds);
  CHECK(seconds == std::vector<double>{6, 2, 4});
  // p(6)->G0; new(4)->G1; q(2)->G1.
  CHECK(groups[0].items == std::vector<std::size_t>{0});
  CHECK(groups[1].items == std::vector<std::size_t>{1, 2});
  CHECK(groups[1].seconds == 6);
  // Without any duration every test counts 1 s; more splits than tests leaves groups empty.
  groups = LeastDurationSplit({"a", "b"}, {}, 3, &seconds);
  CHECK(seconds == std::vector<double>{1, 1});
  CHECK(groups[2].items.empty());
}

TEST_CASE("test durations: a JSON object of seconds, else exit 2 naming the test", "[stage]") {
  Result<std::map<std::string, double>> ok =
      ParseTestDurations(R"({"a.py::t": 1.5, "b.py::u[x y]": 0})", ".test_durations");
  REQUIRE(ok.ok());
  CHECK(ok->at("a.py::t") == 1.5);
  Result<std::map<std::string, double>> bad =
      ParseTestDurations(R"({"a.py::t": "long"})", "d.json");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("d.json: the duration of 'a.py::t'"));
  CHECK_FALSE(ParseTestDurations("[1, 2]", "d.json").ok());
}

}  // namespace
}  // namespace trtllm_run
