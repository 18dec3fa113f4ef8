// The pieces of `run --cases` job arrays (runtime/cases_array.h) and of array task records
// (sdk/slurm/records.h): chunking to MaxArraySize, the shape that groups cases, the
// wrapper's quoting, ARRAYJOB_TASK ids from scontrol's array records.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "runtime/cases_array.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/text.h"

using namespace trtllm_run;

TEST_CASE("job arrays: chunks of at most MaxArraySize cover every task once", "[slurm_array]") {
  using Chunks = std::vector<std::pair<std::size_t, std::size_t>>;
  CHECK(ArrayChunks(0, 1001).empty());
  CHECK(ArrayChunks(4, 1001) == Chunks{{0, 4}});
  CHECK(ArrayChunks(1001, 1001) == Chunks{{0, 1001}});
  CHECK(ArrayChunks(1002, 1001) == Chunks{{0, 1001}, {1001, 1002}});
  CHECK(ArrayChunks(7, 3) == Chunks{{0, 3}, {3, 6}, {6, 7}});
  CHECK(ArrayChunks(3, 0) == Chunks{{0, 1}, {1, 2}, {2, 3}});  // never an endless loop
  for (std::size_t n : {1u, 5u, 999u, 1000u, 2500u}) {
    std::size_t covered = 0;
    for (const auto& [begin, end] : ArrayChunks(n, 1000)) {
      CHECK(begin == covered);
      CHECK(end - begin <= 1000);
      CHECK(end > begin);
      covered = end;
    }
    CHECK(covered == n);
  }
}

TEST_CASE("job arrays: the shape is every #SBATCH line but name and output paths",
          "[slurm_array]") {
  const std::string a =
      "#!/bin/bash\n#SBATCH --job-name=case_a\n#SBATCH --output=/w/a_%j.out\n"
      "#SBATCH --error=/w/a_%j.err\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n"
      "#SBATCH --partition=batch\necho a\n";
  const std::string b =
      "#!/bin/bash\n#SBATCH -J other\n#SBATCH -o /w/b.out\n#SBATCH -e/w/b.err\n"
      "#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n#SBATCH --partition=batch\necho b\n";
  CHECK(SbatchShape(a) == SbatchShape(b));
  CHECK(SbatchShape(a) ==
        "#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n#SBATCH --partition=batch\n");
  // A different time limit, partition or --exclusive is another shape.
  std::string c = a;
  c.replace(c.find("00:10:00"), 8, "00:20:00");
  CHECK(SbatchShape(c) != SbatchShape(a));
  CHECK(SbatchShape(a + "#SBATCH --exclusive\n") != SbatchShape(a));
  // --export is not --error.
  CHECK(SbatchShape(a + "#SBATCH --export=NONE\n") != SbatchShape(a));
}

TEST_CASE("job arrays: the wrapper dispatches each task to its case, every path quoted",
          "[slurm_array]") {
  std::vector<ArrayTask> tasks(2);
  tasks[0].dir = "/w/case $(touch /tmp/pwned)";
  tasks[0].script = "/w/case $(touch /tmp/pwned)/job.slurm";
  tasks[0].out_pieces = {"/w/it's_", ".out"};
  tasks[1].dir = "/w/b";
  tasks[1].script = "/w/b/job.slurm";
  tasks[1].out_pieces = {"/w/b/b_", ".out"};
  tasks[1].err_pieces = {"/w/b/b_", ".err"};
  std::string wrapper =
      RenderArrayWrapper("#SBATCH --nodes=1\n", "my job", "/r/%A_%a.out", 4, tasks);
  CHECK(wrapper.find("#SBATCH --nodes=1\n") != std::string::npos);
  CHECK(wrapper.find("#SBATCH --job-name=\"my job\"\n") != std::string::npos);
  CHECK(wrapper.find("#SBATCH --array=0-1%4\n") != std::string::npos);
  CHECK(wrapper.find("cd -- " + ShellQuote(tasks[0].dir) + " ") != std::string::npos);
  CHECK(wrapper.find(ShellQuote("/w/it's_") + "\"${job}\"" + ShellQuote(".out") + " 2>&1") !=
        std::string::npos);
  CHECK(wrapper.find(ShellQuote("/w/b/b_") + "\"${job}\"" + ShellQuote(".err")) !=
        std::string::npos);
  CHECK(wrapper.find("$(touch /tmp/pwned)'") != std::string::npos);  // inside quotes only
  CHECK(RenderArrayWrapper("", "n", "o", 0, tasks).find("--array=0-1\n") != std::string::npos);
}

TEST_CASE("job arrays: scontrol's array records become one record per ARRAYJOB_TASK",
          "[slurm_array]") {
  const std::string text =
      "JobId=101 ArrayJobId=100 ArrayTaskId=1 JobName=x JobState=RUNNING Reason=None\n"
      "JobId=100 ArrayJobId=100 ArrayTaskId=2-4,7%2 JobName=x JobState=PENDING "
      "Reason=JobArrayTaskLimit\n"
      "JobId=200 JobName=plain JobState=COMPLETED Reason=None\n"
      "JobId=300 ArrayJobId=300 ArrayTaskId=bogus JobName=y JobState=PENDING Reason=None\n";
  std::vector<SlurmJobRecord> records = ParseScontrolJobs(text);
  std::vector<std::string> ids;
  for (const SlurmJobRecord& r : records) ids.push_back(r.job_id + ":" + r.state);
  CHECK(ids == std::vector<std::string>{"100_1:RUNNING", "100_2:PENDING", "100_3:PENDING",
                                        "100_4:PENDING", "100_7:PENDING", "200:COMPLETED",
                                        "300:PENDING"});
  CHECK(ParseScontrolJobs("JobId=5 ArrayJobId=5 ArrayTaskId=[0-1] JobState=PENDING\n").size() == 2);
}

TEST_CASE("job arrays: the board counts queued tasks by pending reason and running ones",
          "[slurm_array]") {
  using trtllm_run::ArrayBoardCounts;
  using trtllm_run::CountArrayStates;
  const ArrayBoardCounts counts = CountArrayStates({{"PENDING (JobArrayTaskLimit)", 3},
                                                    {"PENDING (Priority)", 1},
                                                    {"PENDING", 1},
                                                    {"submitted", 2},
                                                    {"RUNNING", 4},
                                                    {"COMPLETING", 1},
                                                    {"gone from the controller", 1}},
                                                   13, 7);
  CHECK(counts.queued == 7);
  CHECK(counts.running == 6);
  CHECK(counts.done == 7);
  CHECK(counts.queued_reasons ==
        std::map<std::string, std::size_t>{{"JobArrayTaskLimit", 3}, {"Priority", 1}});
  // Before the watcher's first round every case in flight is queued, never lost.
  const ArrayBoardCounts first = CountArrayStates({}, 5, 0);
  CHECK(first.queued == 5);
  CHECK(first.running == 0);
  // A count that is negative or zero adds nothing.
  CHECK(CountArrayStates({{"RUNNING", 0}, {"PENDING (x)", -2}}, 0, 1).queued_reasons.empty());
}

TEST_CASE("job arrays: on by default and TRTLLM_RUN_SLURM_ARRAYS=0 is the escape hatch",
          "[slurm_array]") {
  const char* saved = std::getenv("TRTLLM_RUN_SLURM_ARRAYS");
  const std::string before = saved ? saved : "";
  ::unsetenv("TRTLLM_RUN_SLURM_ARRAYS");
  CHECK(trtllm_run::SlurmArraysEnabled());
  ::setenv("TRTLLM_RUN_SLURM_ARRAYS", "0", 1);
  CHECK_FALSE(trtllm_run::SlurmArraysEnabled());
  ::setenv("TRTLLM_RUN_SLURM_ARRAYS", "1", 1);
  CHECK(trtllm_run::SlurmArraysEnabled());
  if (saved) {
    ::setenv("TRTLLM_RUN_SLURM_ARRAYS", before.c_str(), 1);
  } else {
    ::unsetenv("TRTLLM_RUN_SLURM_ARRAYS");
  }
}
