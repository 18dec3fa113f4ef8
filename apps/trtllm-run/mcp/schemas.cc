#include "schemas.h"

#include <cmath>
#include <map>
#include <set>

#include "model/edit_distance.h"
#include "trtllm_run/request.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::mcp {
namespace {

// What every state-returning tool puts in structuredContent (case_state.h CaseState).
const char kCaseStateSchema[] = R"({
  "type": "object",
  "properties": {
    "handle": {"type": "string", "description": "The work dir (or run_cases dir): give it to wait_case, case_status, case_log, cancel_case."},
    "kind": {"type": "string", "enum": ["case", "cases", "stage"]},
    "status": {"type": "string", "enum": ["PASSED", "FAILED", "TIMEOUT", "HANG_DETECTED", "CANCELLED", "OUT_OF_MEMORY", "ERROR", "SKIPPED", "running", "starting", "not_started", "abandoned"], "description": "The verdict once finished, else what the run is doing."},
    "finished": {"type": "boolean", "description": "True once result.json holds the verdict."},
    "exit_code": {"type": ["integer", "null"], "description": "The trtllm-run exit code of the verdict (0 PASSED, 1 FAILED, 3 ERROR, 4 TIMEOUT, 5 HANG_DETECTED, 6 CANCELLED, 7 OUT_OF_MEMORY, 8 SKIPPED)."},
    "reason": {"type": "string", "description": "One line: the evidence for the status."},
    "diagnosis": {"type": "string", "description": "What a failure likely means and what to do."},
    "scenario": {"type": "string"},
    "workflow": {"type": "string"},
    "model_name": {"type": "string"},
    "job_id": {"type": ["string", "null"], "description": "The Slurm job id, once submitted."},
    "slurm_state": {"type": ["string", "null"], "description": "The controller's job state while it runs (Slurm executors: asked by the executor, on the cluster over SSH for remote_slurm)."},
    "slurm_reason": {"type": ["string", "null"]},
    "elapsed_s": {"type": ["number", "null"], "description": "Seconds since the run started; its duration once finished."},
    "waited_s": {"type": "number", "description": "Seconds this call waited."},
    "log_file": {"type": "string"},
    "log_bytes": {"type": "integer", "minimum": 0},
    "last_lines": {"type": "array", "items": {"type": "string"}, "description": "The last lines of the log."},
    "supervisor_pid": {"type": ["integer", "null"]},
    "supervisor_alive": {"type": "boolean"},
    "result": {"type": ["object", "null"], "description": "result.json as written (docs/result-schema.md); null until finished."},
    "cases": {"type": "array", "description": "run_cases: each case's name, status and handle; run_stage: each shard job (\"split 2\", \"split 2 rerun 1\") as it starts, its status, work dir and job id.", "items": {"type": "object", "properties": {"name": {"type": "string"}, "status": {"type": "string"}, "handle": {"type": "string"}, "job_id": {"type": ["string", "null"]}}, "required": ["name", "status", "handle", "job_id"]}},
    "next": {"type": "string", "description": "What to do next."},
    "report": {"type": ["string", "null"], "description": "The self-contained HTML report (<handle>/report.html, docs/report.md) once the verdict's supervisor wrote it; null before and for a work dir not started by this server."}
  },
  "required": ["handle", "kind", "status", "finished", "exit_code", "reason", "diagnosis", "scenario", "workflow", "model_name", "job_id", "slurm_state", "slurm_reason", "elapsed_s", "waited_s", "log_file", "log_bytes", "last_lines", "supervisor_pid", "supervisor_alive", "result", "cases", "next", "report"]
})";

const char kPlanSchema[] = R"({
  "type": "object",
  "properties": {
    "handle": {"type": "string", "description": "The work dir the plan wrote; run_case with this handle runs it."},
    "scenario": {"type": "string"},
    "workflow": {"type": "string"},
    "model_name": {"type": "string"},
    "image": {"type": ["string", "null"], "description": "The container image, or null when none is used."},
    "script_path": {"type": ["string", "null"], "description": "The rendered script, or null when the command runs directly."},
    "job_spec": {"type": "string", "description": "The path of job_spec.json."},
    "devices": {"type": "object", "properties": {"required_devices": {"type": "integer"}, "per_node": {"type": "integer"}, "total": {"type": "integer"}}, "required": ["required_devices", "per_node", "total"]},
    "nodes": {"type": "integer"},
    "command": {"type": "string"},
    "notes": {"type": "array", "items": {"type": "string"}, "description": "Workflow, derivation and routing decisions."}
  },
  "required": ["handle", "scenario", "workflow", "model_name", "image", "script_path", "job_spec", "devices", "nodes", "command", "notes"]
})";

const char kLogSchema[] = R"({
  "type": "object",
  "properties": {
    "handle": {"type": "string"},
    "log_file": {"type": "string"},
    "offset": {"type": "integer", "minimum": 0, "description": "Byte offset of text in the log."},
    "next_offset": {"type": "integer", "minimum": 0, "description": "Give it as offset to read on."},
    "log_bytes": {"type": "integer", "minimum": 0},
    "eof": {"type": "boolean", "description": "True when text reaches the current end of the log."},
    "finished": {"type": "boolean", "description": "True when the case has its verdict (the log will not grow)."},
    "status": {"type": "string"},
    "text": {"type": "string"}
  },
  "required": ["handle", "log_file", "offset", "next_offset", "log_bytes", "eof", "finished", "status", "text"]
})";

const char kListSchema[] = R"({
  "type": "object",
  "properties": {
    "repo_root": {"type": "string"},
    "cases": {"type": "array", "items": {"type": "object", "properties": {
      "handle": {"type": "string"}, "kind": {"type": "string"}, "status": {"type": "string"},
      "finished": {"type": "boolean"}, "exit_code": {"type": ["integer", "null"]},
      "scenario": {"type": "string"}, "model_name": {"type": "string"},
      "job_id": {"type": ["string", "null"]}, "elapsed_s": {"type": ["number", "null"]}},
      "required": ["handle", "kind", "status", "finished", "exit_code", "scenario", "model_name", "job_id", "elapsed_s"]}}
  },
  "required": ["repo_root", "cases"]
})";

const char kProbeSchema[] = R"({
  "type": "object",
  "properties": {
    "target": {"type": "string", "description": "local, or the ssh destination probed."},
    "exit_status": {"type": "integer", "description": "As `trtllm-run env`: 0 no errors, 2 errors listed, 1 no Slurm client tools."},
    "errors": {"type": "array", "items": {"type": "string"}},
    "slurm_env": {"type": ["object", "null"], "description": "The probe document (slurm_env.json)."},
    "saved_to": {"type": ["string", "null"]}
  },
  "required": ["target", "exit_status", "errors", "slurm_env", "saved_to"]
})";

const char kPerfCompareSchema[] = R"({
  "type": "object",
  "properties": {
    "a": {"type": "string"},
    "b": {"type": "string"},
    "rows": {"type": "array", "items": {"type": "object", "properties": {
      "metric": {"type": "string"},
      "unit": {"type": "string"},
      "direction": {"type": "string", "enum": ["maximize", "minimize"]},
      "a": {"type": ["number", "null"]},
      "b": {"type": ["number", "null"]},
      "change": {"type": ["number", "null"], "description": "(b - a) / a"},
      "verdict": {"type": "string", "description": "better, worse, same, only in A, only in B"}
    }, "required": ["metric", "unit", "direction", "a", "b", "change", "verdict"]}}
  },
  "required": ["a", "b", "rows"]
})";

const char kTestHistorySchema[] = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "store": {"type": "string", "description": "The history store read."},
    "runs": {"type": "integer", "minimum": 0, "description": "Outcomes recorded, reruns included."},
    "passed": {"type": "integer", "minimum": 0},
    "failed": {"type": "integer", "minimum": 0, "description": "Failed or error (a case: any verdict but PASSED and SKIPPED)."},
    "pass_rate": {"type": "number", "minimum": 0, "maximum": 1, "description": "passed / (passed + failed); skips not counted."},
    "p50_seconds": {"type": ["number", "null"]},
    "p90_seconds": {"type": ["number", "null"]},
    "last": {"type": "array", "description": "The newest outcomes, newest first.", "items": {"type": "object", "properties": {
      "recorded_at": {"type": "string"}, "outcome": {"type": "string"}, "commit": {"type": "string"},
      "branch": {"type": "string"}, "attempt": {"type": "integer"}, "duration_seconds": {"type": ["number", "null"]},
      "signature": {"type": "string"}, "stage": {"type": "string"}, "shard": {"type": "integer"}, "work_dir": {"type": "string"}},
      "required": ["recorded_at", "outcome", "commit", "branch", "attempt", "duration_seconds", "signature", "stage", "shard", "work_dir"]}},
    "signatures": {"type": "array", "description": "Failure signatures, most frequent first.", "items": {"type": "object", "properties": {
      "signature": {"type": "string"}, "count": {"type": "integer", "minimum": 1}}, "required": ["signature", "count"]}}
  },
  "required": ["name", "store", "runs", "passed", "failed", "pass_rate", "p50_seconds", "p90_seconds", "last", "signatures"]
})";

const char kFlakySchema[] = R"({
  "type": "object",
  "properties": {
    "store": {"type": "string"},
    "since": {"type": "string", "description": "ISO 8601 UTC start of the window; empty: all."},
    "flaky": {"type": "array", "description": "Highest flake rate first.", "items": {"type": "object", "properties": {
      "node_id": {"type": "string"}, "flake_rate": {"type": "number", "minimum": 0, "maximum": 1},
      "passed": {"type": "integer", "minimum": 0}, "failed": {"type": "integer", "minimum": 0},
      "passed_on_rerun": {"type": "integer", "minimum": 0}, "mixed_commits": {"type": "integer", "minimum": 0},
      "last_at": {"type": "string"}},
      "required": ["node_id", "flake_rate", "passed", "failed", "passed_on_rerun", "mixed_commits", "last_at"]}}
  },
  "required": ["store", "since", "flaky"]
})";

struct ToolText {
  const char* name;
  const char* title;
  const char* description;
  const char* options;   // the tool's own argument properties (JSON object text)
  const char* required;  // JSON array text
  const char* output;    // outputSchema text; "" = the case state
  bool request_fields;
  bool read_only, destructive, idempotent, open_world;
};

const ToolText kTools[] = {
    {"plan_case", "Plan a case",
     "Plans one TensorRT-LLM case as `trtllm-run plan` does: classifies the command, derives "
     "devices and nodes, routes it (local_direct, local_docker, local_slurm, remote_slurm), "
     "picks the image and writes the work dir (job_spec.json, the script). Starts nothing. "
     "Arguments are the request fields of `trtllm-run run` flags and request files, in "
     "snake_case (custom_cmd, test_cmd, bench_cmd, eval_cmd, scenario, partition, ...). Bad "
     "input is a tool error with the CLI's exit-2 message.",
     "{}", "[]", kPlanSchema, true, false, false, false, false},
    {"run_case", "Start a case",
     "Plans and starts one case detached from this server (a `trtllm-run exec` in its own "
     "session that outlives the server and the agent) and returns at once with its handle "
     "(the work dir) and, on Slurm, the job id. Give the request fields as for plan_case, or "
     "`handle` to run a work dir plan_case prepared. Then call wait_case.",
     R"({"handle": {"type": "string", "description": "Run this prepared work dir instead of planning a new one."},
         "kill_grace": {"type": "integer", "minimum": 0, "maximum": 3600, "description": "Seconds between SIGTERM and SIGKILL when the job is stopped (default 30)."}})",
     "[]", "", true, false, false, false, true},
    {"wait_case", "Wait for a verdict",
     "Waits up to timeout_s (at most 100) for a case started by run_case or run_cases. "
     "Returns the verdict (result.json) and `report`, the path of the HTML report "
     "(<handle>/report.html), when it ends in time, else status running with the "
     "elapsed time, the Slurm state and the log's last lines: call it again. Sends "
     "notifications/progress while waiting when the request has a progressToken.",
     R"({"handle": {"type": "string", "description": "The handle run_case or run_cases returned."},
         "timeout_s": {"type": "number", "minimum": 0, "maximum": 100, "description": "Seconds to wait at most (default 45)."},
         "log_lines": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Last log lines to return (default 10)."}})",
     R"(["handle"])", "", false, true, false, true, false},
    {"case_status", "Case status",
     "What a case (or run_cases run) is doing now, or its verdict: as `trtllm-run status`. "
     "Returns at once.",
     R"({"handle": {"type": "string", "description": "The case's work dir."},
         "log_lines": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Last log lines to return (default 10)."}})",
     R"(["handle"])", "", false, true, false, true, false},
    {"cancel_case", "Cancel a case",
     "Stops a running case as `trtllm-run cancel` does (its supervisor cancels as on Ctrl-C: "
     "the process group, the container or the Slurm job), waits up to wait_s for the verdict "
     "and returns the case state (CANCELLED once stopped). A run_cases handle cancels every "
     "case of the run.",
     R"({"handle": {"type": "string", "description": "The case's work dir or the run_cases handle."},
         "wait_s": {"type": "number", "minimum": 0, "maximum": 100, "description": "Seconds to wait for the verdict (default 40)."},
         "kill_grace": {"type": "integer", "minimum": 0, "maximum": 300, "description": "Seconds between the stop request and the kill when trtllm-run stops the job itself (default 10)."}})",
     R"(["handle"])", "", false, false, true, true, true},
    {"case_log", "Read a case's log",
     "Reads part of a case's log: offset >= 0 from the start, a negative offset that many "
     "bytes before the end (offset -65536: the last 64 KiB); at most max_bytes (default "
     "16384, at most 262144). Continue with next_offset.",
     R"({"handle": {"type": "string", "description": "The case's work dir."},
         "offset": {"type": "integer", "description": "Byte offset; negative: from the end (default 0)."},
         "max_bytes": {"type": "integer", "minimum": 1, "maximum": 262144, "description": "Bytes to return at most (default 16384)."}})",
     R"(["handle"])", kLogSchema, false, true, false, true, false},
    {"list_cases", "List recent cases",
     "The most recent work dirs under <repo_root>/work_dirs with their status, newest first.",
     R"({"repo_root": {"type": "string", "description": "The TensorRT-LLM checkout (default: the git top level above the server's directory)."},
         "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many (default 20)."}})",
     "[]", kListSchema, false, true, false, true, false},
    {"perf_compare", "Compare two runs' perf",
     "The perf metrics of two finished perf cases (trtllm-bench, perf-sanity) side by side, "
     "as `trtllm-run perf compare RUN_A RUN_B`: each metric's value in A and B, the change "
     "(b - a) / a and whether B is better or worse by the metric's direction (throughput up, "
     "latency down). From result.json's perf section, else the logs. Returns at once.",
     R"({"run_a": {"type": "string", "description": "The first work dir (a handle run_case returned)."},
         "run_b": {"type": "string", "description": "The second work dir."}})",
     R"(["run_a", "run_b"])", kPerfCompareSchema, false, true, false, true, false},
    {"probe_slurm", "Probe a Slurm cluster",
     "The one-pass Slurm probe (slurm_env.json: partitions, GPUs, accounts, access) of this "
     "host or of a login node over SSH, as `trtllm-run env`. SSH never prompts: use key or "
     "ControlMaster authentication (passwords are never tool arguments).",
     R"({"ssh_host": {"type": "string", "description": "Probe this login node ([user@]host) over SSH."},
         "slurm_cluster": {"type": "string", "description": "A cluster of the catalog (clusters.yaml): its ssh host and policy."},
         "slurm_user": {"type": "string"}, "user_name": {"type": "string"},
         "ssh_port": {"type": "integer", "minimum": 1, "maximum": 65535},
         "identity_file": {"type": "string", "description": "SSH private key file."},
         "partitions": {"type": "array", "items": {"type": "string"}, "description": "Probe hardware and access only for these."},
         "ssh_options": {"type": "array", "items": {"type": "string"}, "description": "Extra ssh -o Key=Value options, e.g. UserKnownHostsFile=FILE (none that runs a command)."},
         "no_access_check": {"type": "boolean", "description": "Skip the sbatch --test-only checks."},
         "output_file": {"type": "string", "description": "Also save the document there (plan against it with slurm_env_file)."},
         "timeout_s": {"type": "number", "minimum": 1, "maximum": 100, "description": "Seconds for the whole probe (default 60)."}})",
     "[]", kProbeSchema, false, true, false, true, true},
    {"run_cases", "Start many cases",
     "Starts every case of a cases file (`trtllm-run run --cases FILE`: YAML/JSON list of "
     "requests, or one pytest id per line) detached, and returns one handle at once. The "
     "request fields given here apply to every case (a case's own keys win). All cases are "
     "planned first: any bad case is a tool error and nothing starts. wait_case on the "
     "handle returns the combined verdict and each case's handle.",
     R"({"cases_file": {"type": "string", "description": "The cases file."},
         "max_parallel": {"type": "integer", "minimum": 1, "description": "Cases in flight at once (default 32)."},
         "max_parallel_local": {"type": "integer", "minimum": 1, "description": "Of those, on this host at once (default 1)."},
         "kill_grace": {"type": "integer", "minimum": 0, "maximum": 3600}})",
     R"(["cases_file"])", "", true, false, false, false, true},
    {"run_stage", "Run a CI stage",
     "Runs a TensorRT-LLM CI stage as its CI does (`trtllm-run stage NAME`) detached, and "
     "returns one handle at once: the stage from the checkout's jenkins/L0_Test.groovy (a "
     "family without its split suffix means every split), the test-db rendered with the "
     "stage's keys, waives applied, the tests split by least_duration into shards that run "
     "as concurrent jobs, failed tests rerun by CI's policy, one merged JUnit. The request "
     "fields given here (scenario, partition, repo_root, ...) apply to every shard job. "
     "wait_case and case_status on the handle show each shard job as it starts (cases) "
     "and, at the end, the stage's verdict with every test's outcome, reruns and attempts "
     "(result.tests); the merged JUnit is <handle>/run/<stage>.xml. cancel_case stops it.",
     R"({"stage": {"type": "string", "description": "The stage name, e.g. DGX_B200-4_GPUs-PyTorch-1, or its family DGX_B200-4_GPUs-PyTorch (every split); with test_db, the name the merged JUnit gets."},
         "test_db": {"type": "string", "description": "Render tests/integration/test_lists/test-db/CONTEXT.yml and skip the stage table (CLI: --test-db)."},
         "match": {"type": "array", "items": {"type": "string"}, "description": "KEY=VALUE overrides of the render's match keys, e.g. system_gpu_count=4 (CLI: --match)."},
         "splits": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Split the tests into N shards (default: the stage table's split count)."},
         "waives": {"type": "string", "description": "The waive list (default: the checkout's tests/integration/test_lists/waives.txt)."},
         "rerun_signatures": {"type": "string", "description": "Known failure signatures, one per line: a test that failed after more than 10 min is rerun once when its failure text holds one."},
         "no_reruns": {"type": "boolean", "description": "Do not rerun failed tests (CI's policy is the default)."},
         "python": {"type": "string", "description": "The interpreter that runs pytest in each shard's job (default python3)."},
         "max_parallel_local": {"type": "integer", "minimum": 0, "maximum": 1000, "description": "Shards running on this host at once (local_direct, local_docker); 0: all."},
         "kill_grace": {"type": "integer", "minimum": 0, "maximum": 3600}})",
     R"(["stage"])", "", true, false, false, false, true},
    {"test_history", "A test's history",
     "What the history remembers of one test (its pytest node id, as a stage's test list "
     "writes it) or case (its cases-file name or command), as `trtllm-run history NAME "
     "--json`: pass rate (skips not counted), the newest outcomes with dates, commits, "
     "attempts and work dirs, duration p50/p90, failure signatures by count. The history is "
     "the server's (`trtllm-run mcp --history STORE`, else the user's). An unknown name is "
     "a tool error.",
     R"({"name": {"type": "string", "description": "The test's node id or the case's name."},
         "last": {"type": "integer", "minimum": 1, "maximum": 200, "description": "How many of the newest outcomes to list (default 10)."}})",
     R"(["name"])", kTestHistorySchema, false, true, false, true, false},
    {"flaky_tests", "Flaky tests",
     "The flaky tests of the history, as `trtllm-run history flaky --json`: tests with a "
     "pass and a failure on one commit, or that failed and then passed on a rerun, highest "
     "flake rate (failures / outcomes) first, with their counts.",
     R"({"days": {"type": "number", "exclusiveMinimum": 0, "maximum": 36500, "description": "Only the outcomes of the last N days (default: all)."}})",
     "[]", kFlakySchema, false, true, false, true, false},
};

const ToolText* FindText(std::string_view name) {
  for (const ToolText& tool : kTools) {
    if (name == tool.name) return &tool;
  }
  return nullptr;
}

Value Parsed(const std::string& text, Allocator& alloc) {
  Value value;
  if (!ParseInto(text, alloc, &value)) value.SetObject();
  return value;
}

Value RequestFieldSchema(const RequestField& field, Allocator& a) {
  Value schema(rapidjson::kObjectType);
  switch (field.type) {
    case FieldType::kString:
      SetStr(&schema, "type", "string", a);
      break;
    case FieldType::kInt:
      SetStr(&schema, "type", "integer", a);  // its range is the CLI's (help says it)
      break;
    case FieldType::kBool:
      SetStr(&schema, "type", "boolean", a);
      break;
    case FieldType::kStringList: {
      SetStr(&schema, "type", "array", a);
      Value items(rapidjson::kObjectType);
      SetStr(&items, "type", "string", a);
      Set(&schema, "items", items, a);
      break;
    }
  }
  SetStr(&schema, "description", field.help + " (CLI: --" + field.flag + ")", a);
  return schema;
}

Value BuildTool(const ToolText& text, Allocator& a) {
  Value tool(rapidjson::kObjectType);
  SetStr(&tool, "name", text.name, a);
  SetStr(&tool, "title", text.title, a);
  SetStr(&tool, "description", text.description, a);
  Value input(rapidjson::kObjectType);
  SetStr(&input, "type", "object", a);
  Value properties = Parsed(text.options, a);
  if (text.request_fields) {
    for (const RequestField& field : RequestFields()) {
      Set(&properties, field.name, RequestFieldSchema(field, a), a);
    }
    // The executor's own inputs, as --executor-option KEY=VALUE takes them.
    RequestField executor_option{"executor_option", "executor-option", FieldType::kStringList,
                                 "KEY=VALUE inputs of the chosen executor (repeatable)"};
    Set(&properties, executor_option.name, RequestFieldSchema(executor_option, a), a);
  }
  Set(&input, "properties", properties, a);
  Set(&input, "required", Parsed(text.required, a), a);
  Set(&input, "additionalProperties", Value(false), a);
  Set(&tool, "inputSchema", input, a);
  Value output = Parsed(*text.output ? text.output : kCaseStateSchema, a);
  if (std::string_view(text.name) == "cancel_case") {
    Value extra =
        Parsed(R"({"type": "string", "description": "What trtllm-run cancel printed."})", a);
    Set(&output["properties"], "cancel_output", extra, a);
  }
  Set(&tool, "outputSchema", output, a);
  Value annotations(rapidjson::kObjectType);
  SetStr(&annotations, "title", text.title, a);
  Set(&annotations, "readOnlyHint", Value(text.read_only), a);
  Set(&annotations, "destructiveHint", Value(text.destructive), a);
  Set(&annotations, "idempotentHint", Value(text.idempotent), a);
  Set(&annotations, "openWorldHint", Value(text.open_world), a);
  Set(&tool, "annotations", annotations, a);
  return tool;
}

// The tools/list array and each tool's own argument names, built once.
struct Catalog {
  Document tools{rapidjson::kArrayType};
  std::map<std::string, std::set<std::string>, std::less<>> options;
};

const Catalog& TheCatalog() {
  static const Catalog* catalog = [] {
    auto* built = new Catalog;
    Allocator& a = built->tools.GetAllocator();
    for (const ToolText& text : kTools) {
      built->tools.PushBack(BuildTool(text, a), a);
      Document options;
      options.Parse(text.options);
      for (auto it = options.MemberBegin(); it != options.MemberEnd(); ++it) {
        built->options[text.name].insert(it->name.GetString());
      }
    }
    return built;
  }();
  return *catalog;
}

const Document& ToolCatalog() { return TheCatalog().tools; }

const char* TypeName(const Value& value) {
  if (value.IsString()) return "a string";
  if (value.IsBool()) return "a boolean";
  if (value.IsNumber()) return "a number";
  if (value.IsArray()) return "an array";
  if (value.IsObject()) return "an object";
  return "null";
}

// Checks one value against a property schema of the kinds used above.
Status CheckValue(std::string_view tool, std::string_view name, const Value& schema,
                  const Value& value) {
  const std::string where = std::string(tool) + " argument '" + std::string(name) + "'";
  std::string type = Member(schema, "type") ? Member(schema, "type")->GetString() : "";
  bool ok = (type == "string" && value.IsString()) || (type == "boolean" && value.IsBool()) ||
            (type == "number" && value.IsNumber()) ||
            (type == "integer" && value.IsNumber() &&
             value.GetDouble() == std::floor(value.GetDouble())) ||
            (type == "array" && value.IsArray());
  if (!ok) {
    return Status::InvalidInput(where + " must be " +
                                (type == "integer" ? "an integer"
                                 : type == "array" ? "an array of strings"
                                                   : "a " + type) +
                                ", got " + TypeName(value));
  }
  if (value.IsNumber()) {
    double number = value.GetDouble();
    const Value* min = Member(schema, "minimum");
    const Value* max = Member(schema, "maximum");
    if ((min && number < min->GetDouble()) || (max && number > max->GetDouble())) {
      std::string range = min && max ? "between " + std::to_string(min->GetInt()) + " and " +
                                           std::to_string(max->GetInt())
                          : min ? ">= " + std::to_string(min->GetInt())
                                : "<= " + std::to_string(max->GetInt());
      return Status::InvalidInput(
          where + " must be " + range + ", got " +
          (value.IsInt64() ? std::to_string(value.GetInt64()) : std::to_string(number)));
    }
  }
  if (value.IsArray()) {
    for (const Value& item : value.GetArray()) {
      if (!item.IsString())
        return Status::InvalidInput(where + " must hold strings only, got " + TypeName(item));
    }
  }
  return Status::Ok();
}

}  // namespace

const Value& ToolList() { return ToolCatalog(); }

const Value* FindTool(std::string_view name) {
  for (const Value& tool : ToolCatalog().GetArray()) {
    if (name == tool["name"].GetString()) return &tool;
  }
  return nullptr;
}

bool TakesRequestFields(std::string_view tool) {
  const ToolText* text = FindText(tool);
  return text && text->request_fields;
}

bool IsToolOption(std::string_view tool, std::string_view name) {
  const auto& options = TheCatalog().options;
  auto it = options.find(tool);
  return it != options.end() && it->second.count(std::string(name)) > 0;
}

std::vector<std::string> ToolArgumentNames(std::string_view tool) {
  std::vector<std::string> names;
  const Value* definition = FindTool(tool);
  if (definition == nullptr) return names;
  const Value& properties = (*definition)["inputSchema"]["properties"];
  for (auto it = properties.MemberBegin(); it != properties.MemberEnd(); ++it) {
    names.emplace_back(it->name.GetString(), it->name.GetStringLength());
  }
  return names;
}

Status CheckToolArguments(std::string_view tool, const Value& arguments) {
  const Value* definition = FindTool(tool);
  if (definition == nullptr)
    return Status::InvalidInput("unknown tool '" + std::string(tool) + "'");
  const Value& schema = (*definition)["inputSchema"];
  const Value& properties = schema["properties"];
  std::string own;
  auto options = TheCatalog().options.find(tool);
  if (options != TheCatalog().options.end()) {
    for (const std::string& name : options->second) own += (own.empty() ? "" : ", ") + name;
  }
  for (auto it = arguments.MemberBegin(); it != arguments.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    if (IsToolOption(tool, name)) {
      TRTLLM_RUN_RETURN_IF_ERROR(CheckValue(tool, name, properties[it->name], it->value));
    } else if (!TakesRequestFields(tool)) {
      const std::string closest = ClosestName(name, ToolArgumentNames(tool));
      return Status::InvalidInput(
          "unknown argument '" + EscapeControl(std::string(name)) + "' of " + std::string(tool),
          (closest.empty() ? std::string() : "did you mean '" + closest + "'? ") +
              "its arguments are: " + own);
    }
  }
  for (const Value& name : schema["required"].GetArray()) {
    if (Member(arguments, name.GetString()) == nullptr) {
      return Status::InvalidInput(std::string(tool) + " needs the argument '" + name.GetString() +
                                  "'");
    }
  }
  return Status::Ok();
}

}  // namespace trtllm_run::mcp
