// The table of Slurm pending reasons that waiting cannot clear (slurm_pending.h), and the
// verdict of a job cancelled for one, or for --max-pending.
#include <catch2/catch.hpp>

#include "model/slurm_pending.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"

using namespace trtllm_run;

TEST_CASE("hopeless pending reasons: the table's names and per-job limits, not waits",
          "[slurm][pending]") {
  for (const char* reason :
       {"PartitionDown", "PartitionInactive", "PartitionConfig", "PartitionTimeLimit",
        "BadConstraints", "InvalidAccount", "InvalidQOS", "DependencyNeverSatisfied",
        "QOSMaxGRESPerJob", "QOSMaxWallDurationPerJobLimit", "AssocMaxCpuPerJobLimit",
        "AssocMaxNodePerJobLimit", "AssocMaxCpuMinutesPerJobLimit",
        "AssocMaxWallDurationPerJobLimit", "AssocMaxGRESPerJob", "AssocMaxMemPerJob"}) {
    INFO(reason);
    std::optional<HopelessPendingReason> row = FindHopelessPendingReason(reason);
    REQUIRE(row.has_value());
    CHECK(row->reason == reason);
    CHECK_FALSE(row->fix.empty());
  }
  for (const char* reason :
       {"Resources", "Priority", "Dependency", "BeginTime", "Reservation", "JobHeldUser",
        "JobHeldAdmin", "ReqNodeNotAvail, UnavailableNodes:node1", "PartitionNodeLimit",
        "QOSGrpGRES", "AssocGrpCpuLimit", "QOSMaxJobsPerUserLimit", "QOSMaxGRESPerUser",
        // An account's running totals (Slurm's WAIT_ASSOC_MAX_JOBS / _MAX_SUB_JOB): they
        // clear as its other jobs end, unlike the per-job AssocMax*PerJob* limits above.
        "AssocMaxJobsLimit", "AssocMaxSubmitJobLimit", "AssocGrpJobsLimit",
        "AssocGrpSubmitJobsLimit", "", "None"}) {
    INFO(reason);
    CHECK_FALSE(FindHopelessPendingReason(reason).has_value());
  }
  // The name before a comma counts.
  REQUIRE(FindHopelessPendingReason("PartitionDown, whatever").has_value());
  CHECK(FindHopelessPendingReason("PartitionDown, whatever")->reason == "PartitionDown");
}

TEST_CASE("a job cancelled while pending is ERROR with no exit code and the reason",
          "[slurm][pending]") {
  SlurmJobEvidence e;
  e.job_id = "42";
  e.action_confirmed = true;
  SlurmJobRecord record;
  record.job_id = "42";
  record.state = "CANCELLED";
  e.controller = record;
  e.controller_final = true;

  e.action = SlurmAction::kHopelessPending;
  e.action_detail = "InvalidQOS";
  RunResult hopeless = JudgeSlurmJob(e);
  CHECK(hopeless.status == RunStatus::kError);
  CHECK(hopeless.reason ==
        "job 42 was pending with reason InvalidQOS (its QOS is not valid for the account), which "
        "waiting cannot clear; job 42 was cancelled with scancel and left the queue");
  CHECK_FALSE(hopeless.exit_code.has_value());
  CHECK(hopeless.details["pending_reason"] == "InvalidQOS");
  CHECK(hopeless.diagnosis.find("Fix: give a QOS the account may use") != std::string::npos);

  e.action = SlurmAction::kMaxPending;
  e.action_detail = "Priority";
  e.max_pending_seconds = 90;
  RunResult bounded = JudgeSlurmJob(e);
  CHECK(bounded.status == RunStatus::kError);
  CHECK(bounded.reason ==
        "still pending after 90s: Priority; job 42 was cancelled with scancel and left the queue");
  CHECK(bounded.diagnosis.find("until --max-pending ran out") != std::string::npos);
}
