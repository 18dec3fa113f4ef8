// Slurm time limits in the duration syntax of every time flag (slurm_time.h) and the
// did-you-mean helper (edit_distance.h).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "model/edit_distance.h"
#include "model/slurm_time.h"

namespace trtllm_run {
namespace {

TEST_CASE("NormalizeSlurmTime: durations become Slurm text, Slurm's forms stay", "[slurm_time]") {
  struct Case {
    const char* given;
    const char* slurm;
  };
  for (const Case& c : std::vector<Case>{{"2h", "02:00:00"},
                                         {"90m", "01:30:00"},
                                         {"30s", "00:00:30"},
                                         {"36h", "1-12:00:00"},
                                         {"72h", "3-00:00:00"},
                                         {" 1h ", "01:00:00"},
                                         {"02:00:00", "02:00:00"},
                                         {"1-00:00:00", "1-00:00:00"},
                                         {"30:00", "30:00"},
                                         {"45", "45"},
                                         {"UNLIMITED", "UNLIMITED"}}) {
    INFO(c.given);
    Result<std::string> slurm = NormalizeSlurmTime(c.given, "time_limit");
    REQUIRE(slurm.ok());
    CHECK(slurm.value() == c.slurm);
  }
  for (const char* bad : {"", "2 hours", "2x", "h", "0", "0s", "-1h", "1:2:3:4", ":30"}) {
    INFO(bad);
    Result<std::string> slurm = NormalizeSlurmTime(bad, "time_limit (from --time-limit)");
    REQUIRE_FALSE(slurm.ok());
    CHECK(slurm.status().code() == StatusCode::kInvalidInput);
    CHECK_THAT(slurm.status().message(),
               Catch::StartsWith("invalid time_limit (from --time-limit) '"));
    CHECK_THAT(slurm.status().hint(), Catch::Contains("2h, 90m, 3600s or HH:MM:SS"));
  }
}

TEST_CASE("ClosestName: the nearest candidate within a third of the word", "[edit_distance]") {
  const std::vector<std::string> flags = {"--partition", "--partitions", "--account", "--format"};
  CHECK(ClosestName("--partiton", flags) == "--partition");
  CHECK(ClosestName("--acount", flags) == "--account");
  CHECK(ClosestName("--fromat", flags) == "--format");  // a transposition is one edit
  CHECK(ClosestName("--zzzzzzzz", flags).empty());
  CHECK(EditDistance("status", "statsu") == 1);
  CHECK(EditDistance("", "abc") == 3);
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(EditDistance("ca", "abc") == 3);  // optimal string alignment: no edit of a swapped pair
  CHECK(EditDistance("abcdef", "abdcef") == 1);
  CHECK(EditDistance("abc", "") == 3);
}

// Names come from files anyone writes (a checkout's stage table): a long one is compared
// in memory linear in its length, and a word past 256 bytes gets no suggestion at all (the
// old full table for a 5,000-byte word against a 200,000-byte name was 8 GB).
TEST_CASE("ClosestName: long names are not compared and cost linear memory", "[edit_distance]") {
  const std::string long_name = "A10-PyTorch-" + std::string(200000, 'x');
  CHECK(EditDistance(long_name, "A10-PyTorch-") == 200000);  // time |a| x |b|: one side short
  CHECK(EditDistance(std::string(3000, 'a'), std::string(3000, 'b')) == 3000);
  const std::string word(300, 'w');
  CHECK(ClosestName(word, {word + "x"}).empty());  // past 256 bytes: no suggestion
  const std::string at_limit(256, 'w');
  CHECK(ClosestName(at_limit, {"short", at_limit + "x"}) == at_limit + "x");
  CHECK(ClosestName("PyTorch", {long_name, "PyTorhc"}) == "PyTorhc");
}

}  // namespace
}  // namespace trtllm_run
