// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned by
// sdk_client_test.sh) drives `trtllm-run mcp` over its stdio client transport, as an
// agent host would: tools/list, every result checked against the tool's outputSchema
// (by the SDK's callTool and again here), plan_case with good and bad input, a
// local_direct case waited for across several calls, a cancelled case, a wait the client
// aborts (notifications/cancelled), and a local_slurm case on the test cluster to its
// verdict, and run_stage: a CI stage of a fixture checkout in 2 shards with a flaky and a
// failing test, its shard jobs as they start and every test's outcome at the end, on
// local_direct and as Slurm jobs on the test cluster (local_slurm), and test_history and
// flaky_tests reading what those stages recorded. The server records in a history of this
// test's own (mcp --history) and sees a private XDG_DATA_HOME: nothing reaches the user's
// history.
//
//   TRTLLM_RUN_BIN=build/bin/trtllm-run node sdk_client_test.mjs
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const BIN = process.env.TRTLLM_RUN_BIN;
assert.ok(BIN && fs.existsSync(BIN), "set TRTLLM_RUN_BIN to the trtllm-run binary");
const repo = fs.mkdtempSync(path.join(os.tmpdir(), "trtllm_mcp_sdk_"));
const marker = `mcp_sdk_${process.pid}`;
const EXPECTED_TOOLS = ["plan_case", "run_case", "wait_case", "case_status", "cancel_case",
                        "case_log", "list_cases", "probe_slurm", "run_cases", "run_stage",
                        "perf_compare", "test_history", "flaky_tests"];
// SDK_TEST_ONLY=REGEX runs only the steps whose name matches (tools/list always runs).
const only = process.env.SDK_TEST_ONLY ? new RegExp(process.env.SDK_TEST_ONLY) : null;
                        // The history the server and everything it starts record in, and a data home where the
// default store would go: it must stay empty.
const historyStore = path.join(repo, "history.sqlite");
const dataHome = fs.mkdtempSync(path.join(os.tmpdir(), "trtllm_mcp_sdk_data_"));
const validator = new AjvJsonSchemaValidator();
const outputCheck = new Map();
let failures = 0;

function log(line) { process.stderr.write(`[sdk test] ${line}\n`); }

async function step(name, body) {
  if (only && !only.test(name) && !name.startsWith("tools/list")) return;
  const started = Date.now();
  try {
    await body();
    log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    failures += 1;
    log(`FAIL ${name}: ${error.stack || error}`);
  }
}

// tools/call through the SDK (which validates structuredContent itself), then the
// explicit check against the outputSchema from tools/list.
async function call(client, name, args, options = {}) {
  const result = await client.callTool({ name, arguments: args }, undefined,
                                       { timeout: 150000, ...options });
  if (!result.isError) {
    assert.ok(result.structuredContent, `${name} returned no structuredContent`);
    const verdict = outputCheck.get(name)(result.structuredContent);
    assert.ok(verdict.valid, `${name}: ${verdict.errorMessage}`);
  }
  assert.equal(result.content[0].type, "text");
  return result;
}

async function waitForVerdict(client, handle, maxCalls, timeoutS) {
  let state;
  for (let i = 0; i < maxCalls; i += 1) {
    state = (await call(client, "wait_case", { handle, timeout_s: timeoutS })).structuredContent;
    if (state.finished) return { state, calls: i + 1 };
  }
  assert.fail(`no verdict after ${maxCalls} wait_case calls: ${JSON.stringify(state)}`);
}

const transport = new StdioClientTransport({
  command: BIN, args: ["mcp", "--history", historyStore], cwd: repo, stderr: "inherit",
  env: { ...process.env, XDG_DATA_HOME: dataHome } });
const client = new Client({ name: "trtllm-run-sdk-test", version: "1.0.0" });
// Anything on the server's stdout that is not a JSON-RPC message lands here.
const transportErrors = [];
client.onerror = (error) => transportErrors.push(String(error));
await client.connect(transport);
log(`connected: ${JSON.stringify(client.getServerVersion())}`);

await step("tools/list: every tool with input and output schemas that compile", async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [...EXPECTED_TOOLS].sort());
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    assert.ok(tool.outputSchema, `${tool.name} has no outputSchema`);
    outputCheck.set(tool.name, validator.getValidator(tool.outputSchema));
    validator.getValidator(tool.inputSchema);  // compiles
  }
  const plan = tools.find((t) => t.name === "plan_case");
  for (const field of ["custom_cmd", "test_cmd", "scenario", "partition", "monitor_timeout"]) {
    assert.ok(plan.inputSchema.properties[field], `plan_case lacks ${field}`);
  }
});

await step("plan_case: a good request gives the plan and writes the work dir", async () => {
  const result = await call(client, "plan_case", {
    custom_cmd: "echo planned", scenario: "local_direct", repo_root: repo, model_name: "sdk_plan" });
  assert.ok(!result.isError, result.content[0].text);
  const plan = result.structuredContent;
  assert.equal(plan.scenario, "local_direct");
  assert.equal(plan.workflow, "custom");
  assert.equal(plan.devices.required_devices, 1);
  assert.ok(fs.existsSync(path.join(plan.handle, "job_spec.json")));
  assert.match(result.content[0].text, /Scenario: local_direct/);
});

await step("plan_case: bad input is a tool error naming the argument, not the CLI flag", async () => {
  const args = { custom_cmd: "echo x", total_required_devices: 0, repo_root: repo };
  const result = await call(client, "plan_case", args);
  assert.equal(result.isError, true);
  assert.equal(result.content[0].text,
               "trtllm-run plan: error: total_required_devices must be a positive integer, got '0'");
  const cli = spawnSync(BIN, ["plan", "--custom-cmd", "echo x", "--total-required-devices", "0",
                              "--repo-root", repo], { encoding: "utf8" });
  assert.equal(cli.status, 2);
  assert.match(cli.stderr, /got '0' \(from --total-required-devices\)/);
  const unknown = await call(client, "plan_case", { custom_cmd: "echo x", custom_cdm: "y" });
  assert.equal(unknown.isError, true);
  assert.equal(unknown.content[0].text,
               "trtllm-run plan: error: unknown argument 'custom_cdm' of tool plan_case\n" +
               "  hint: did you mean 'custom_cmd'? the tool's inputSchema lists its arguments");
});

await step("run_case + wait_case: a local_direct case, waited for across calls", async () => {
  const started = await call(client, "run_case", {
    custom_cmd: `echo ${marker}_local; sleep 6; echo local-done`, scenario: "local_direct",
    repo_root: repo, model_name: "sdk_local" });
  assert.ok(!started.isError, started.content[0].text);
  const handle = started.structuredContent.handle;
  assert.ok(["running", "starting"].includes(started.structuredContent.status));
  const progress = [];
  const first = await call(client, "wait_case", { handle, timeout_s: 2.5 },
                           { onprogress: (p) => progress.push(p) });
  assert.equal(first.structuredContent.status, "running");
  assert.equal(first.structuredContent.finished, false);
  assert.equal(first.structuredContent.report, null);
  assert.ok(first.structuredContent.elapsed_s >= 0);
  assert.ok(progress.length >= 1, "no notifications/progress while waiting");
  for (let i = 1; i < progress.length; i += 1) assert.ok(progress[i].progress > progress[i - 1].progress);
  const { state, calls } = await waitForVerdict(client, handle, 5, 10);
  assert.ok(calls >= 1);
  assert.equal(state.status, "PASSED");
  assert.equal(state.exit_code, 0);
  assert.equal(state.result.status, "PASSED");
  // The HTML report its supervisor wrote at the verdict (docs/report.md), named in the result.
  assert.equal(state.report, path.join(handle, "report.html"));
  const page = fs.readFileSync(state.report, "utf8");
  assert.match(page, /^<!DOCTYPE html>/);
  assert.match(page, /<span class="badge ok">PASSED<\/span>/);
  assert.match(page, /<svg class="timeline"/);
  assert.doesNotMatch(page, /https?:/);
  const logged = await call(client, "case_log", { handle, offset: 0 });
  assert.match(logged.structuredContent.text, /local-done/);
  const status = await call(client, "case_status", { handle });
  assert.equal(status.structuredContent.status, "PASSED");
  const listed = await call(client, "list_cases", { repo_root: repo });
  assert.ok(listed.structuredContent.cases.some((c) => c.handle === handle && c.status === "PASSED"));
});

await step("cancel_case: a running case is CANCELLED and its process is gone", async () => {
  const started = await call(client, "run_case", {
    custom_cmd: `echo ${marker}_cancel; sleep 300; true`, scenario: "local_direct", repo_root: repo,
    model_name: "sdk_cancel" });
  const handle = started.structuredContent.handle;
  const running = await call(client, "wait_case", { handle, timeout_s: 1 });
  assert.equal(running.structuredContent.status, "running");
  const cancelled = await call(client, "cancel_case", { handle, wait_s: 40 });
  assert.equal(cancelled.structuredContent.status, "CANCELLED", cancelled.content[0].text);
  assert.equal(cancelled.structuredContent.exit_code, 6);
  const left = spawnSync("pgrep", ["-f", `${marker}_cancel`], { encoding: "utf8" });
  assert.equal(left.stdout.trim(), "", "the cancelled job left processes");
});

await step("an aborted wait_case (notifications/cancelled) leaves the case and server running", async () => {
  const started = await call(client, "run_case", {
    custom_cmd: `echo ${marker}_abort; sleep 4; echo abort-done`, scenario: "local_direct",
    repo_root: repo, model_name: "sdk_abort" });
  const handle = started.structuredContent.handle;
  const controller = new AbortController();
  setTimeout(() => controller.abort("the agent moved on"), 1000);
  await assert.rejects(call(client, "wait_case", { handle, timeout_s: 60 },
                            { signal: controller.signal }));
  const { state } = await waitForVerdict(client, handle, 3, 20);
  assert.equal(state.status, "PASSED");
});

await step("probe_slurm: the local cluster's slurm_env", async () => {
  const probe = await call(client, "probe_slurm", { partitions: ["batch"], timeout_s: 60 });
  assert.ok(!probe.isError, probe.content[0].text);
  assert.equal(probe.structuredContent.target, "local");
  assert.ok(probe.structuredContent.slurm_env.partitions.some((p) => p.name === "batch"));
});

await step("run_case on local_slurm (test cluster) to its verdict", async () => {
  const started = await call(client, "run_case", {
    custom_cmd: `echo ${marker}_slurm; sleep 3; echo slurm-done`, scenario: "local_slurm",
    partition: "batch", skip_install: true, container_runtime: "none", container_image: "none",
    repo_root: repo, model_name: "sdk_slurm" });
  assert.ok(!started.isError, started.content[0].text);
  const handle = started.structuredContent.handle;
  const { state } = await waitForVerdict(client, handle, 6, 30);
  assert.equal(state.status, "PASSED", JSON.stringify(state));
  assert.ok(state.job_id, "no Slurm job id");
  const id = fs.readFileSync(path.join(handle, "slurm_job_id"), "utf8").trim();
  assert.equal(state.job_id, id);
  const queued = execFileSync("squeue", ["-h", "-j", id, "-t", "PD,R,CG"], { encoding: "utf8" });
  assert.equal(queued.trim(), "");
});

// A checkout in TensorRT-LLM's shape: test-db context l0_sdk renders 4 tests for
// stage=pre_merge; test_flaky fails on its first run and passes on its rerun.
function writeStageCheckout(root) {
  const defs = path.join(root, "tests/integration/defs");
  const lists = path.join(root, "tests/integration/test_lists");
  fs.mkdirSync(defs, { recursive: true });
  fs.mkdirSync(path.join(lists, "test-db"), { recursive: true });
  fs.writeFileSync(path.join(defs, "test_sdk.py"), [
    "import os", "import time", "",
    "def test_pass_a():", "    time.sleep(3)", "",
    "def test_pass_b():", "    time.sleep(3)", "",
    "def test_flaky():",
    "    seen = os.path.join(os.path.dirname(__file__), '.flaky_seen')",
    "    if not os.path.exists(seen):",
    "        open(seen, 'w').close()",
    "        assert False, 'first run fails'", "",
    "def test_fail_always():", "    assert False, 'always fails'", ""].join("\n"));
  fs.writeFileSync(path.join(lists, "test-db/l0_sdk.yml"), [
    "version: 0.0.1", "l0_sdk:", "- condition:", "    terms:", "      stage: pre_merge",
    "  tests:", "  - test_sdk.py::test_pass_a", "  - test_sdk.py::test_pass_b",
    "  - test_sdk.py::test_flaky", "  - test_sdk.py::test_fail_always", ""].join("\n"));
  fs.writeFileSync(path.join(lists, "waives.txt"), "");
  fs.writeFileSync(path.join(defs, ".test_durations"),
                   JSON.stringify({ "test_sdk.py::test_pass_a": 3, "test_sdk.py::test_pass_b": 3 }));
}

await step("run_stage: bad input is a tool error and nothing runs", async () => {
  const root = path.join(repo, "stage_bad");
  writeStageCheckout(root);
  const base = { stage: "SDK-Stage", test_db: "l0_sdk", scenario: "local_direct", repo_root: root };
  const empty = await call(client, "run_stage", { ...base, match: ["stage=no_such_stage"] });
  assert.equal(empty.isError, true);
  assert.match(empty.content[0].text, /no_such_stage/);
  const ssh = await call(client, "run_stage", { ...base, ssh_option: ["ProxyCommand=touch x"] });
  assert.equal(ssh.isError, true);
  assert.match(ssh.content[0].text, /is not allowed/);
  const command = await call(client, "run_stage", { ...base, custom_cmd: "echo hi" });
  assert.equal(command.isError, true);
  // Named as the agent gave it (the stage's CLI text says --custom-cmd).
  assert.match(command.content[0].text, /argument 'custom_cmd'/);
  assert.doesNotMatch(command.content[0].text, /--custom-cmd/);
  const secret = await call(client, "run_stage", { ...base, password: "s3cret" });
  assert.equal(secret.isError, true);
  assert.doesNotMatch(secret.content[0].text, /s3cret/);
  const junit = path.join(root, "elsewhere.xml");  // no file written where an agent says
  const output = await call(client, "run_stage", { ...base, junit });
  assert.equal(output.isError, true);
  assert.match(output.content[0].text, /junit/);
  assert.ok(!fs.existsSync(junit));
  const missing = await call(client, "run_stage", { test_db: "l0_sdk", repo_root: root });
  assert.equal(missing.isError, true);
  // Nothing ran, nothing was left behind: no handle, no shard work dir.
  const dirs = fs.existsSync(path.join(root, "work_dirs")) ? fs.readdirSync(path.join(root, "work_dirs")) : [];
  assert.deepEqual(dirs, []);
});

await step("run_stage + wait_case: 2 shards, progress per shard, per-test outcomes", async () => {
  const root = path.join(repo, "stage_good");
  writeStageCheckout(root);
  const started = await call(client, "run_stage", {
    stage: "SDK-Stage", test_db: "l0_sdk", match: ["stage=pre_merge"], splits: 2,
    python: "/usr/bin/python3", scenario: "local_direct", repo_root: root });
  assert.ok(!started.isError, started.content[0].text);
  const handle = started.structuredContent.handle;
  assert.equal(started.structuredContent.kind, "stage");
  assert.equal(started.structuredContent.status, "running", JSON.stringify(started.structuredContent));
  const running = (await call(client, "wait_case", { handle, timeout_s: 2 })).structuredContent;
  assert.equal(running.finished, false);
  assert.deepEqual(running.cases.map((c) => c.name).sort(), ["split 1", "split 2"]);
  const { state } = await waitForVerdict(client, handle, 12, 20);
  assert.equal(state.status, "FAILED", JSON.stringify(state));
  assert.equal(state.exit_code, 1);
  const names = state.cases.map((c) => c.name);
  assert.ok(names.includes("split 1") && names.includes("split 2"), names.join(", "));
  assert.ok(names.some((n) => / rerun 1$/.test(n)), names.join(", "));
  const outcome = Object.fromEntries(state.result.tests.map((t) => [t.id, t]));
  assert.equal(outcome["test_sdk.py::test_pass_a"].outcome, "passed");
  assert.equal(outcome["test_sdk.py::test_flaky"].outcome, "flaky");
  assert.equal(outcome["test_sdk.py::test_flaky"].reruns, 1);
  assert.equal(outcome["test_sdk.py::test_fail_always"].outcome, "failed");
  assert.equal(outcome["test_sdk.py::test_fail_always"].reruns, 2);
  assert.equal(state.result.counts.total, 4);
  assert.match(state.reason, /1 flaky/);
  const status = await call(client, "case_status", { handle });
  assert.equal(status.structuredContent.status, "FAILED");
  const cancelled = await call(client, "cancel_case", { handle });
  assert.match(cancelled.structuredContent.cancel_output, /nothing to cancel/);
});

await step("run_stage on local_slurm: 2 shards as 2 Slurm jobs, per-test outcomes", async () => {
  const root = path.join(repo, "stage_slurm");
  writeStageCheckout(root);
  const started = await call(client, "run_stage", {
    stage: "SDK-Stage", test_db: "l0_sdk", match: ["stage=pre_merge"], splits: 2,
    python: "/usr/bin/python3", scenario: "local_slurm", partition: "batch", skip_install: true,
    container_runtime: "none", container_image: "none", repo_root: root });
  assert.ok(!started.isError, started.content[0].text);
  const handle = started.structuredContent.handle;
  assert.equal(started.structuredContent.kind, "stage");
  const { state } = await waitForVerdict(client, handle, 15, 30);
  assert.equal(state.status, "FAILED", JSON.stringify(state));
  assert.equal(state.exit_code, 1);
  // Each first-round shard is a Slurm job of its own that sacct knows and that ended.
  const shards = state.cases.filter((c) => /^split \d$/.test(c.name));
  assert.deepEqual(shards.map((c) => c.name).sort(), ["split 1", "split 2"], JSON.stringify(state.cases));
  const ids = shards.map((c) => c.job_id);
  assert.ok(ids.every((id) => /^\d+$/.test(id || "")), JSON.stringify(shards));
  assert.notEqual(ids[0], ids[1]);
  // The report's timeline holds each shard job with the scheduler's (sacct) times.
  assert.equal(state.report, path.join(handle, "report.html"));
  const page = fs.readFileSync(state.report, "utf8");
  for (const id of ids) {
    assert.match(page, new RegExp(`<tr class="job" data-job="${id}" data-submit="\\d+" data-start="\\d+" data-end="\\d+">`));
  }
  assert.match(page, /from the scheduler&#39;s records \(sacct\)/);
  for (const id of ids) {
    const ended = execFileSync("sacct", ["-n", "-X", "-j", id, "-o", "State%20"], { encoding: "utf8" });
    assert.match(ended, /COMPLETED|FAILED/, `job ${id}: ${ended}`);
    const queued = execFileSync("squeue", ["-h", "-j", id, "-t", "PD,R,CG"], { encoding: "utf8" });
    assert.equal(queued.trim(), "", `job ${id} still queued or running`);
  }
  // Reruns ran as jobs too, and every test has its outcome.
  assert.ok(state.cases.some((c) => / rerun 1$/.test(c.name) && /^\d+$/.test(c.job_id || "")),
            JSON.stringify(state.cases));
  const outcome = Object.fromEntries(state.result.tests.map((t) => [t.id, t]));
  assert.equal(outcome["test_sdk.py::test_pass_a"].outcome, "passed");
  assert.equal(outcome["test_sdk.py::test_pass_b"].outcome, "passed");
  assert.equal(outcome["test_sdk.py::test_flaky"].outcome, "flaky");
  assert.equal(outcome["test_sdk.py::test_flaky"].reruns, 1);
  assert.equal(outcome["test_sdk.py::test_fail_always"].outcome, "failed");
  assert.equal(outcome["test_sdk.py::test_fail_always"].reruns, 2);
  assert.equal(state.result.counts.total, 4);
  assert.equal(state.scenario, "local_slurm");
});

await step("test_history and flaky_tests: what the two stages recorded in the server's history", async () => {
  const failing = await call(client, "test_history", { name: "test_sdk.py::test_fail_always", last: 4 });
  assert.ok(!failing.isError, failing.content[0].text);
  const record = failing.structuredContent;
  assert.equal(record.store, historyStore);
  assert.equal(record.runs, 6, JSON.stringify(record));  // 3 attempts in each of the 2 stages
  assert.equal(record.failed, 6);
  assert.equal(record.passed, 0);
  assert.equal(record.pass_rate, 0);
  assert.equal(record.last.length, 4);
  assert.equal(record.last[0].stage, "SDK-Stage");
  assert.ok(record.signatures.length >= 1 && record.signatures[0].count >= 1, JSON.stringify(record.signatures));
  assert.match(failing.content[0].text, /0 passed, 6 failed of 6 runs/);
  const passing = await call(client, "test_history", { name: "test_sdk.py::test_pass_a" });
  assert.equal(passing.structuredContent.passed, 2);
  assert.equal(passing.structuredContent.pass_rate, 1);
  const unknown = await call(client, "test_history", { name: "test_sdk.py::never_ran" });
  assert.equal(unknown.isError, true);
  assert.match(unknown.content[0].text, /no test or case named 'test_sdk.py::never_ran'/);
  const option = await call(client, "test_history", { name: "--json" });
  assert.equal(option.isError, true);
  const flaky = await call(client, "flaky_tests", {});
  assert.ok(!flaky.isError, flaky.content[0].text);
  assert.equal(flaky.structuredContent.store, historyStore);
  assert.deepEqual(flaky.structuredContent.flaky.map((t) => t.node_id), ["test_sdk.py::test_flaky"]);
  const [test] = flaky.structuredContent.flaky;
  assert.equal(test.passed_on_rerun, 2);  // it passed on its rerun in both stages
  assert.equal(test.failed, 2);
  assert.match(flaky.content[0].text, /1 flaky test\(s\).*test_sdk.py::test_flaky/);
  const recent = await call(client, "flaky_tests", { days: 1 });
  assert.equal(recent.structuredContent.flaky.length, 1);
  assert.notEqual(recent.structuredContent.since, "");
  const bad = await call(client, "flaky_tests", { days: -1 });
  assert.equal(bad.isError, true);
});

await step("run_stage + cancel_case: a running stage is stopped, its shards' processes gone", async () => {
  const root = path.join(repo, "stage_cancel");
  writeStageCheckout(root);
  fs.writeFileSync(path.join(root, "tests/integration/defs/test_sdk.py"), "import time\n" +
    ["test_pass_a", "test_pass_b", "test_flaky", "test_fail_always"]
      .map((name) => `\ndef ${name}():\n    time.sleep(300)\n`).join(""));
  const started = await call(client, "run_stage", {
    stage: "SDK-Stage", test_db: "l0_sdk", match: ["stage=pre_merge"], splits: 1,
    python: "/usr/bin/python3", scenario: "local_direct", repo_root: root });
  assert.ok(!started.isError, started.content[0].text);
  const handle = started.structuredContent.handle;
  const running = (await call(client, "wait_case", { handle, timeout_s: 2 })).structuredContent;
  assert.equal(running.status, "running", JSON.stringify(running));
  const cancelled = await call(client, "cancel_case", { handle, wait_s: 40 });
  assert.equal(cancelled.structuredContent.status, "CANCELLED", JSON.stringify(cancelled.structuredContent));
  assert.equal(cancelled.structuredContent.finished, true);
  const left = spawnSync("pgrep", ["-f", `test_sdk.py`], { encoding: "utf8" });
  const inRoot = (pid) => { try { return fs.readlinkSync(`/proc/${pid}/cwd`).startsWith(root); } catch { return false; } };
  const ours = left.stdout.trim().split("\n").filter((pid) => pid && inRoot(pid));
  assert.deepEqual(ours, [], "the cancelled stage left pytest running");
});

await step("perf_compare: two perf work dirs side by side, bad input a tool error", async () => {
  // Two finished work dirs as a trtllm-bench case writes them (result.json's perf section).
  const dirs = ["perf_a", "perf_b", "no_perf"].map((name) => path.join(repo, "work_dirs", name));
  const metrics = [[{ name: "total_token_throughput", value: 1000.25, unit: "tok/s", direction: "maximize", gated: true },
                    { name: "mean_ttft", value: 50, unit: "ms", direction: "minimize", gated: false }],
                   [{ name: "total_token_throughput", value: 850.5, unit: "tok/s", direction: "maximize", gated: true },
                    { name: "mean_ttft", value: 40, unit: "ms", direction: "minimize", gated: false },
                    { name: "al", value: 2.5, unit: "tokens", direction: "maximize", gated: true }]];
  dirs.forEach((dir, i) => {
    fs.mkdirSync(dir, { recursive: true });
    const result = { schema_version: 1, status: "PASSED", workflow_type: "bench", work_dir: dir,
                     log_file: path.join(dir, "missing.log") };
    if (i < 2) result.perf = { metrics: metrics[i], match_key: { model: "m" } };
    fs.writeFileSync(path.join(dir, "result.json"), JSON.stringify(result));
  });
  const result = await call(client, "perf_compare", { run_a: dirs[0], run_b: dirs[1] });
  assert.ok(!result.isError, result.content[0].text);
  const rows = Object.fromEntries(result.structuredContent.rows.map((row) => [row.metric, row]));
  assert.equal(rows.total_token_throughput.a, 1000.25);
  assert.equal(rows.total_token_throughput.b, 850.5);
  assert.ok(Math.abs(rows.total_token_throughput.change - (850.5 / 1000.25 - 1)) < 1e-12);
  assert.equal(rows.total_token_throughput.verdict, "worse");
  assert.equal(rows.mean_ttft.verdict, "better");  // lower latency
  assert.equal(rows.al.verdict, "only in B");
  assert.equal(rows.al.a, null);
  assert.match(result.content[0].text, /total_token_throughput \(tok\/s\)/);
  const cli = spawnSync(BIN, ["perf", "compare", dirs[0], dirs[1], "--json"], { encoding: "utf8" });
  assert.equal(cli.status, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout), result.structuredContent);
  const none = await call(client, "perf_compare", { run_a: dirs[0], run_b: dirs[2] });
  assert.equal(none.isError, true);
  assert.match(none.content[0].text, /has no perf metrics/);
  const missing = await call(client, "perf_compare", { run_a: dirs[0] });
  assert.equal(missing.isError, true);
});

await step("the server's stdout held JSON-RPC messages only", async () => {
  assert.deepEqual(transportErrors, []);
});

await step("nothing was recorded outside the test's own history", async () => {
  assert.ok(fs.existsSync(historyStore), "the server's --history store was never written");
  assert.deepEqual(fs.readdirSync(dataHome), [], "something wrote the default history store");
});

await client.close();
fs.rmSync(repo, { recursive: true, force: true });
fs.rmSync(dataHome, { recursive: true, force: true });
if (failures > 0) {
  log(`${failures} step(s) failed`);
  process.exit(1);
}
log("all steps passed");
