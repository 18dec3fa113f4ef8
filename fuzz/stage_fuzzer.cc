// CI stage planning's readers of a checkout's files: the stage table of L0_Test.groovy
// (ReadStageTable), a test-db YAML (RenderTestDb), .test_durations (ParseTestDurations),
// and least_duration over what they give. The first byte picks the reader; the rest is
// the file.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_check.h"
#include "stage/least_duration.h"
#include "stage/stage_table.h"
#include "stage/test_db_render.h"

namespace {

// Every item in exactly one group, each group ascending, totals not negative.
void CheckSplit(const std::vector<std::string>& ids, const std::map<std::string, double>& durations,
                int splits) {
  std::vector<trtllm_run::SplitGroup> groups =
      trtllm_run::LeastDurationSplit(ids, durations, splits);
  FUZZ_CHECK(groups.size() == static_cast<std::size_t>(splits));
  std::set<std::size_t> seen;
  for (const trtllm_run::SplitGroup& group : groups) {
    FUZZ_CHECK(group.seconds >= 0);
    for (std::size_t i = 0; i < group.items.size(); ++i) {
      FUZZ_CHECK(group.items[i] < ids.size());
      FUZZ_CHECK(i == 0 || group.items[i - 1] < group.items[i]);
      FUZZ_CHECK(seen.insert(group.items[i]).second);
    }
  }
  FUZZ_CHECK(seen.size() == ids.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(trtllm_run_fuzz::AsText(data + 1, size - 1));
  switch (data[0] % 3) {
    case 0: {
      std::vector<std::string> names;
      for (const trtllm_run::StageEntry& entry : trtllm_run::ReadStageTable(text)) {
        FUZZ_CHECK(entry.split_id >= 1 && entry.split_id <= entry.split_count);
        FUZZ_CHECK(entry.gpu_count >= 1 && entry.node_count >= 1 && entry.line >= 1);
        names.push_back(entry.name);
        trtllm_run::MatchKeysFromStageName(entry.name);
      }
      FUZZ_CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
      break;
    }
    case 1: {
      const std::map<std::string, std::string> keys = {
          {"gpu", "dgx_b200"}, {"system_gpu_count", "4"}, {"stage", "pre_merge"}};
      trtllm_run::Result<trtllm_run::RenderedTestDb> rendered =
          trtllm_run::RenderTestDb(text, "fuzz_db.yml", "l0_fuzz", keys);
      if (!rendered.ok()) {
        FUZZ_CHECK(rendered.status().code() == trtllm_run::StatusCode::kInvalidInput);
        FUZZ_CHECK(rendered.status().message().find("fuzz_db.yml") != std::string::npos);
        break;
      }
      std::vector<std::string> ids;
      for (const trtllm_run::RenderedTest& test : rendered->tests) ids.push_back(test.line.id);
      CheckSplit(ids, {}, 3);
      break;
    }
    default: {
      trtllm_run::Result<std::map<std::string, double>> durations =
          trtllm_run::ParseTestDurations(text, "fuzz_durations");
      if (!durations.ok()) {
        FUZZ_CHECK(durations.status().message().find("fuzz_durations") != std::string::npos);
        break;
      }
      std::vector<std::string> ids;
      for (const auto& [id, seconds] : durations.value()) {
        FUZZ_CHECK(seconds >= 0);
        ids.push_back(id);
      }
      ids.push_back("unknown.py::t");
      CheckSplit(ids, durations.value(), 2);
      break;
    }
  }
  return 0;
}
