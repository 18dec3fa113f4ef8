// CI's rerun policy, row by row (stage/rerun_policy.h; jenkins/scripts/test_rerun.py).
#include "stage/rerun_policy.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using trtllm_run::stage::DecideReruns;
using trtllm_run::stage::DurationWords;
using trtllm_run::stage::FirstRun;
using trtllm_run::stage::ReadFailureSignatures;

TEST_CASE("the rerun policy table, row by row, at its boundaries", "[stage][rerun]") {
  const std::vector<std::string> none;
  const std::vector<std::string> signatures = {"CUDA error: an illegal memory access", "NCCL WARN"};
  // <= 5 min: 2 reruns (5 min exactly included).
  CHECK(DecideReruns(FirstRun::kFailed, 0.2, "", none).reruns == 2);
  CHECK(DecideReruns(FirstRun::kFailed, 300, "", none).reruns == 2);
  CHECK(DecideReruns(FirstRun::kFailed, 300, "", none).reason ==
        "rerun 2 times: failed after 5 min (<= 5 min)");
  // (5, 10] min: 1 rerun.
  CHECK(DecideReruns(FirstRun::kFailed, 300.5, "", none).reruns == 1);
  CHECK(DecideReruns(FirstRun::kFailed, 600, "", none).reruns == 1);
  // > 10 min: 0 without a signature, 1 with one (case-insensitive, anywhere in the text).
  auto long_plain = DecideReruns(FirstRun::kFailed, 14 * 60, "AssertionError: 3 != 4", signatures);
  CHECK(long_plain.reruns == 0);
  CHECK(long_plain.reason == "not eligible for rerun: ran 14 min, no matching failure signature");
  auto long_known = DecideReruns(FirstRun::kFailed, 600.5,
                                 "RuntimeError: cuda ERROR: An Illegal Memory Access was "
                                 "encountered",
                                 signatures);
  CHECK(long_known.reruns == 1);
  CHECK_THAT(long_known.reason, Contains("CUDA error: an illegal memory access"));
  CHECK(DecideReruns(FirstRun::kFailed, 3600, "x NCCL WARN y", none).reruns == 0);
  // Unfinished: 0, whatever its duration; never run: 1.
  CHECK(DecideReruns(FirstRun::kUnfinished, 1, "", signatures).reruns == 0);
  CHECK_THAT(DecideReruns(FirstRun::kUnfinished, 1, "", signatures).reason,
             Contains("not eligible for rerun"));
  CHECK(DecideReruns(FirstRun::kNotRun, 0, "", none).reruns == 1);
}

TEST_CASE("durations read as words", "[stage][rerun]") {
  CHECK(DurationWords(0) == "0 s");
  CHECK(DurationWords(59.4) == "59 s");
  CHECK(DurationWords(60) == "1 min");
  CHECK(DurationWords(845) == "14 min 5 s");
}

TEST_CASE("a signatures file: comments and blanks skipped, bad files named", "[stage][rerun]") {
  fs::path dir = fs::temp_directory_path() / ("rerun_policy_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "sigs.txt") << "# known infrastructure failures\n\n"
                                       "  CUDA error: an illegal memory access  \r\n"
                                       "NCCL WARN\n";
  }
  auto signatures = ReadFailureSignatures((dir / "sigs.txt").string());
  REQUIRE(signatures.ok());
  CHECK(*signatures ==
        std::vector<std::string>{"CUDA error: an illegal memory access", "NCCL WARN"});

  auto missing = ReadFailureSignatures((dir / "none.txt").string());
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Contains("--rerun-signatures"));
  CHECK_THAT(missing.status().message(), Contains("none.txt"));

  {
    std::ofstream out(dir / "nul.txt", std::ios::binary);
    out.write("ok\nbad\0line\n", 12);
  }
  auto nul = ReadFailureSignatures((dir / "nul.txt").string());
  REQUIRE_FALSE(nul.ok());
  CHECK_THAT(nul.status().message(), Contains("line 2"));

  { std::ofstream(dir / "big.txt"); }
  fs::resize_file(dir / "big.txt", (1u << 20) + 1);
  auto big = ReadFailureSignatures((dir / "big.txt").string());
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Contains("above the limit"));

  CHECK_FALSE(ReadFailureSignatures(dir.string()).ok());  // a directory
  fs::remove_all(dir);
}
