// Reading command lines without running them: the tokenizer's quoting rules, the
// top-level && split, invocations and their options, rewriting, the eval arguments, the
// perf-sanity id grammar and HuggingFace model lookup.
#include "plan_test_support.h"

using namespace plan_test;

namespace {

std::vector<std::string> Texts(const std::string& command) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(command);
  REQUIRE(tokens.ok());
  std::vector<std::string> texts;
  for (const ShellToken& token : tokens.value()) {
    texts.push_back(token.kind == ShellToken::kOperator ? "<" + token.text + ">" : token.text);
  }
  return texts;
}

std::vector<std::string> Split(const std::string& command) {
  Result<std::vector<std::string>> parts = SplitTopLevelAnd(command);
  REQUIRE(parts.ok());
  return parts.value();
}

}  // namespace

TEST_CASE("TokenizeShell: words, quotes, substitutions and operators", "[command_parse]") {
  using V = std::vector<std::string>;
  CHECK(Texts("a 'b c' \"d $X\" e\\ f") == V{"a", "b c", "d $X", "e f"});
  CHECK(Texts("a&&b||c;d|e&") == V{"a", "<&&>", "b", "<||>", "c", "<;>", "d", "<|>", "e", "<&>"});
  CHECK(Texts("echo $(echo \"a && b\") `x && y`") == V{"echo", "$(echo \"a && b\")", "`x && y`"});
  CHECK(Texts("cmd 2>&1 &>log >&2") == V{"cmd", "2>&1", "&>log", ">&2"});
  CHECK(Texts("a \\\n b # comment && c\nd") == V{"a", "b", "<\n>", "d"});
  CHECK(Texts("echo \"${A:-x y}\" ${B}") == V{"echo", "${A:-x y}", "${B}"});
  CHECK(Texts("echo \"q\\\"q\" 'it'\\''s'") == V{"echo", "q\"q", "it's"});

  Result<std::vector<ShellToken>> tokens = TokenizeShell("x 'abc' y");
  REQUIRE(tokens.ok());
  CHECK(tokens.value()[1].begin == 2);
  CHECK(tokens.value()[1].end == 7);

  for (const char* bad : {"echo 'open", "echo \"open", "echo $(open", "echo `open"}) {
    INFO(bad);
    Result<std::vector<ShellToken>> result = TokenizeShell(bad);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == StatusCode::kInvalidInput);
    CHECK_THAT(result.status().message(), Catch::Contains("unterminated"));
  }
}

TEST_CASE("SplitTopLevelAnd splits only on top-level &&", "[command_parse]") {
  using V = std::vector<std::string>;
  CHECK(Split("a && b") == V{"a", "b"});
  CHECK(Split("single command --x") == V{"single command --x"});
  CHECK(Split("a --note \"x && y\" && b") == V{"a --note \"x && y\"", "b"});
  CHECK(Split("a '&&' b") == V{"a '&&' b"});
  CHECK(Split("a $(x && y) && b `p && q`") == V{"a $(x && y)", "b `p && q`"});
  CHECK(Split("(a && b) && c") == V{"(a && b)", "c"});
  CHECK(Split("{ a && b; } && c") == V{"{ a && b; }", "c"});
  CHECK(Split("a \\\n  && b") == V{"a", "b"});
  CHECK(Split("a || b && c") == V{"a || b", "c"});
  CHECK(Split("a\n&& b") == V{"a", "b"});
  Result<std::vector<std::string>> empty = SplitTopLevelAnd("a && ");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.status().message(), Catch::Contains("empty command next to '&&'"));
}

TEST_CASE("LastInvocation finds the last program call and its options", "[command_parse]") {
  std::optional<Invocation> last = LastInvocation(
      "trtllm-bench --model a prepare-dataset --tp 8 && mpirun -n 2 /usr/bin/trtllm-bench "
      "--model b throughput --tp=4 --pp 2 --tp 3",
      "trtllm-bench");
  REQUIRE(last);
  CHECK(last->words[0].text == "/usr/bin/trtllm-bench");
  CHECK(last->Option({"--tp"}) == std::optional<std::string>("3"));  // the last one wins
  CHECK(last->Option({"--pp"}) == std::optional<std::string>("2"));
  CHECK(last->Option({"--model"}) == std::optional<std::string>("b"));
  CHECK_FALSE(last->Option({"--ep"}));
  CHECK(last->HasWord("throughput"));
  CHECK_FALSE(LastInvocation("echo trtllm-benchmark", "trtllm-bench"));
  CHECK_FALSE(LastInvocation("echo 'unterminated", "echo"));
}

TEST_CASE("PrefixInvocation inserts a launcher before the program", "[command_parse]") {
  CHECK(PrefixInvocation("trtllm-bench --tp 2", "trtllm-bench", "trtllm-llmapi-launch") ==
        "trtllm-llmapi-launch trtllm-bench --tp 2");
  CHECK(PrefixInvocation("A=1 B='x y' trtllm-bench --tp 2", "trtllm-bench", "L") ==
        "A=1 B='x y' L trtllm-bench --tp 2");
  CHECK(PrefixInvocation("trtllm-llmapi-launch trtllm-bench", "trtllm-bench",
                         "trtllm-llmapi-launch") == "trtllm-llmapi-launch trtllm-bench");
  CHECK(PrefixInvocation("/opt/bin/trtllm-llmapi-launch trtllm-bench", "trtllm-bench",
                         "trtllm-llmapi-launch") == "/opt/bin/trtllm-llmapi-launch trtllm-bench");
  CHECK(PrefixInvocation("echo nothing", "trtllm-bench", "L") == "echo nothing");
}

TEST_CASE("ReplaceOptionValue rewrites only the matching values, byte for byte elsewhere",
          "[command_parse]") {
  CHECK(ReplaceOptionValue("x --model org/M  --other 'q  q' --model=org/M", {"--model"}, "org/M",
                           "/m/a b") == "x --model '/m/a b'  --other 'q  q' --model='/m/a b'");
  CHECK(ReplaceOptionValue("x --model other", {"--model"}, "org/M", "/m") == "x --model other");
  CHECK(ReplaceOptionValue("x --model \"org/M\"", {"--model"}, "org/M", "/m") == "x --model /m");
}

TEST_CASE("ParseEvalCommand reads the sizes, the model and the task", "[command_parse]") {
  Result<EvalArgs> args = ParseEvalCommand(
      "trtllm-eval --model /m/x --tp_size 4 --pp_size=2 --gpus_per_node 4 --trust_remote_code "
      "mmlu --apply_chat_template");
  REQUIRE(args.ok());
  CHECK(args->tp_size == 4);
  CHECK(args->pp_size == 2);
  CHECK(args->world_size() == 8);
  CHECK(args->gpus_per_node == std::optional<int>(4));
  CHECK(args->model == std::optional<std::string>("/m/x"));
  CHECK(args->task == "mmlu");
  Result<EvalArgs> bad = ParseEvalCommand("trtllm-eval --tp_size 0 gsm8k");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("--tp_size must be a positive integer"));
}

TEST_CASE("FindPerfSanityId parses the test id grammar", "[command_parse][perf]") {
  Result<std::optional<PerfSanityId>> id = FindPerfSanityId(
      "pytest -v 'perf/test_perf_sanity.py::test_e2e[aggr_upload-cfg_a-srv-x-y]' TIMEOUT (90)");
  REQUIRE(id.ok());
  REQUIRE(id.value());
  CHECK(id.value()->test_string == "perf/test_perf_sanity.py::test_e2e[aggr_upload-cfg_a-srv-x-y]");
  CHECK(id.value()->id == "aggr_upload-cfg_a-srv-x-y");
  CHECK(id.value()->prefix == "aggr_upload");
  CHECK(id.value()->config == "cfg_a");
  CHECK(id.value()->select == "srv-x-y");
  CHECK(id.value()->mode.empty());
  CHECK_FALSE(id.value()->disaggregated_config);

  id = FindPerfSanityId("test_e2e[disagg-gen_only-a-b-UCX]");
  REQUIRE(id.ok());
  CHECK(id.value()->mode == "gen_only");
  CHECK(id.value()->config == "a-b-UCX");
  CHECK(id.value()->disaggregated_config);

  id = FindPerfSanityId("test_e2e[aggr-ctx_only-a-b]");
  REQUIRE(id.ok());
  CHECK(id.value()->mode == "ctx_only");
  CHECK(id.value()->config == "a-b");
  CHECK(id.value()->disaggregated_config);

  id = FindPerfSanityId("pytest tests/unittest/test_x.py");
  REQUIRE(id.ok());
  CHECK_FALSE(id.value());

  for (const char* bad :
       {"test_e2e[aggr]", "test_e2e[disagg-e2e]", "test_e2e[x-y-z]", "test_e2e[aggr-cfg"}) {
    INFO(bad);
    Result<std::optional<PerfSanityId>> result = FindPerfSanityId(bad);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == StatusCode::kInvalidInput);
  }
}

TEST_CASE("IsHuggingFaceId and FindModelDirectory", "[command_parse][model]") {
  CHECK(IsHuggingFaceId("meta-llama/Llama-3.1-8B"));
  CHECK_FALSE(IsHuggingFaceId("/models/llama"));
  CHECK_FALSE(IsHuggingFaceId("./llama/x"));
  CHECK_FALSE(IsHuggingFaceId("llama"));
  CHECK_FALSE(IsHuggingFaceId("s3://bucket/model"));

  TempDir root;
  fs::create_directories(root / "a/Llama-3.1-8B");
  fs::create_directories(root / "b/c/llama-3.1-8b");
  fs::create_directories(root / "d/e/f/Deep");
  CHECK(FindModelDirectory(root.path(), "meta-llama/LLAMA-3.1-8B") ==
        std::optional<std::string>(root / "a/Llama-3.1-8B"));  // shallowest first
  CHECK_FALSE(FindModelDirectory(root.path(), "x/Deep"));      // deeper than 3 levels
  CHECK(FindModelDirectory(root.path(), "x/Deep", 4));
  CHECK_FALSE(FindModelDirectory(root / "missing", "x/Deep"));
}
