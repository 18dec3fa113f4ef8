#include <catch2/catch.hpp>

#include "trtllm_run/sdk/commands/derive.h"

using namespace trtllm_run;

TEST_CASE("FindModelArgument reads every spelling of the model flag", "[derive]") {
  CHECK(FindModelArgument("trtllm-bench --model meta/Llama-3 throughput") == "meta/Llama-3");
  CHECK(FindModelArgument("trtllm-bench --model=/m/llama throughput") == "/m/llama");
  CHECK(FindModelArgument("trtllm-eval -m \"/models/my model\" gsm8k") == "/models/my model");
  CHECK(FindModelArgument("python run.py --model_path /x/y") == "/x/y");
  CHECK(FindModelArgument("python run.py --model_path=/x/z") == "/x/z");
  CHECK_FALSE(FindModelArgument("python run.py --models-dir /x").has_value());
  CHECK_FALSE(FindModelArgument("echo --model").has_value());  // flag without a value
  CHECK_FALSE(FindModelArgument("echo 'unterminated").has_value());
}

TEST_CASE("DeriveModelName prefers the given name, then the command, then the fallback",
          "[derive]") {
  JobPlan plan;
  CaseRequest request;
  CHECK(DeriveModelName(request, "x --model Llama-3.1-8B-Instruct", "custom", &plan).value() ==
        "llama_3_1_8b_instruct");
  CHECK(DeriveModelName(request, "echo hi", "custom", &plan).value() == "custom");
  request.model_name = "My Model!";
  CHECK(DeriveModelName(request, "x --model other", "custom", &plan).value() == "my_model");
  request.model_name = "---";
  Result<std::string> bad = DeriveModelName(request, "echo", "custom", &plan);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("model_name '---'"));
  CHECK(plan.notes.size() == 3);
}

TEST_CASE("ApplyDeviceCounts: caller values win, node_count is the ceiling", "[derive]") {
  CaseRequest request;
  JobPlan plan;
  REQUIRE(ApplyDeviceCounts(request, 4, &plan).ok());
  CHECK(plan.total_required_devices == 4);
  CHECK(plan.required_devices_per_node == 4);
  CHECK(plan.node_count == 1);

  request.total_required_devices = 16;
  request.required_devices_per_node = 6;
  REQUIRE(ApplyDeviceCounts(request, 4, &plan).ok());
  CHECK(plan.node_count == 3);

  request.node_count = 5;
  REQUIRE(ApplyDeviceCounts(request, 4, &plan).ok());
  CHECK(plan.node_count == 5);

  CaseRequest too_many;
  too_many.total_required_devices = 2;
  too_many.required_devices_per_node = 8;
  Status status = ApplyDeviceCounts(too_many, 2, &plan);
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains("required_devices_per_node (8)"));
}
