// trtllm-bench sizes: --tp/--pp and the --tp_size/--pp_size spelling of TensorRT-LLM's
// docs are one option each; both size the job.
#include "plan_test_support.h"

using namespace plan_test;

namespace {

BenchArgs Parse(const std::string& command) {
  Result<BenchArgs> args = ParseBenchCommand(command);
  INFO(command << ": " << args.status().ToString());
  REQUIRE(args.ok());
  return args.value();
}

}  // namespace

TEST_CASE("ParseBenchCommand: both spellings, both forms", "[command_parse][bench]") {
  BenchArgs sized = Parse("trtllm-bench --model m throughput --tp_size 4 --pp_size 2");
  CHECK(sized.tp == 4);
  CHECK(sized.pp == 2);
  CHECK(sized.world_size() == 8);
  CHECK(sized.tp_option == "--tp_size");
  CHECK(sized.pp_option == "--pp_size");

  CHECK(Parse("trtllm-bench --model m throughput --tp_size=2 --pp-size=3").world_size() == 6);
  CHECK(Parse("trtllm-bench --model m throughput --tp-size 2").world_size() == 2);
  BenchArgs short_form = Parse("trtllm-bench --model m throughput --tp 2 --pp=2 --ep 4");
  CHECK(short_form.world_size() == 4);
  CHECK(short_form.ep == 4);
  CHECK(short_form.tp_option == "--tp");
  CHECK(Parse("trtllm-bench --model m throughput --ep_size 8").ep == 8);
  BenchArgs none = Parse("trtllm-bench --model m throughput");
  CHECK(none.world_size() == 1);
  CHECK(none.tp_option.empty());
  // The same value under both spellings is one size.
  CHECK(Parse("trtllm-bench --model m throughput --tp 2 --tp_size 2").tp == 2);
  // The sizes of the last invocation only.
  CHECK(Parse("trtllm-bench --model m prepare-dataset --tp_size 8 && "
              "trtllm-bench --model m throughput --tp_size 2")
            .tp == 2);
}

TEST_CASE("ParseBenchCommand: bad and contradicting sizes are errors", "[command_parse][bench]") {
  Result<BenchArgs> two = ParseBenchCommand("trtllm-bench --model m throughput --tp 2 --tp_size 4");
  REQUIRE_FALSE(two.ok());
  CHECK(two.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(two.status().message(), Catch::StartsWith("bench_cmd: --tp 2 and --tp_size 4 give "
                                                       "two sizes in: "));
  CHECK_THAT(two.status().hint(), Catch::Contains("--tp, --tp_size and --tp-size are one option"));

  Result<BenchArgs> zero = ParseBenchCommand("trtllm-bench --model m throughput --pp_size 0");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message() == "bench_cmd: --pp_size must be a positive integer, got '0'");
  Result<BenchArgs> word = ParseBenchCommand("trtllm-bench --model m throughput --tp_size four");
  REQUIRE_FALSE(word.ok());
  CHECK(word.status().message() == "bench_cmd: --tp_size must be a positive integer, got 'four'");
  Result<BenchArgs> none = ParseBenchCommand("python3 bench.py --tp_size 2");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "bench_cmd does not run trtllm-bench");
}

TEST_CASE("bench plan: --tp_size 4 --pp_size 2 is 8 GPUs and 8 MPI tasks", "[workflow][bench]") {
  CaseRequest request;
  request.bench_cmd = "trtllm-bench --model /m/Llama-3.1-8B throughput --tp_size 4 --pp_size 2";
  Result<JobPlan> plan = PlanCase(request);
  INFO((plan.ok() ? Notes(plan.value()) : plan.status().ToString()));
  REQUIRE(plan.ok());
  CHECK(plan->required_devices == 8);
  CHECK(plan->total_required_devices == 8);
  CHECK(plan->node_count == 1);
  CHECK(HasNote(plan.value(), "required_devices 8: tp 4 (--tp_size) x pp 2 (--pp_size)"));
  const PlanStep& run = plan->steps.back();
  CHECK(run.tasks == 8);
  CHECK(run.use_mpi);
  CHECK(run.command ==
        "trtllm-llmapi-launch trtllm-bench --model /m/Llama-3.1-8B throughput --tp_size 4 "
        "--pp_size 2");
}
