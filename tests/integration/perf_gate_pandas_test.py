#!/usr/bin/python3
"""CI's perf baseline and gate, implemented again here with pandas, against trtllm-run's.

An independent implementation of TensorRT-LLM's README_perf_regression_system.md
(tests/integration/defs/perf/): per metric, the post-merge history and the new value
grouped by day and averaged, a trailing rolling mean of 3 days, then P95 (metrics to
maximize) or P5 (to minimize); thresholds 5 % post-merge, 10 % pre-merge, pinned
per-metric overrides; a pre-merge case is exempt when the latest post-merge record itself
misses the pre-merge gate (an unusable record does not exempt). 50 seeded histories are
given to `trtllm-run perf evaluate FILE`; every baseline must agree to 1e-9 relative, and
every verdict (regressed, exempt, failing) exactly.

  perf_gate_pandas_test.py TRTLLM_RUN_BIN
"""
import json
import math
import random
import subprocess
import sys
import tempfile

import pandas as pd

METRICS = {  # name: (maximize, gated by default)
    "total_token_throughput": (True, True),
    "token_throughput": (True, True),
    "seq_throughput": (True, False),
    "mean_ttft": (False, False),
    "p99_itl": (False, True),  # gated here to cover a gated metric to minimize
}


def pandas_baseline(points, maximize):
    frame = pd.DataFrame(points, columns=["at", "value"])
    frame["day"] = frame["at"].str.slice(0, 10)
    daily = frame.groupby("day")["value"].mean().sort_index()
    smoothed = daily.rolling(window=3, min_periods=1).mean()
    return float(smoothed.quantile(0.95 if maximize else 0.05, interpolation="linear"))


def misses(value, baseline, threshold, maximize):
    if maximize:
        return value < baseline * (1 - threshold)
    return value > baseline * (1 + threshold)


def expected_gate(case):
    mode = case["mode"]
    history = case["history"]
    pinned = case.get("pinned")
    rows = {}
    if not any(history.values()) and pinned is None:
        return {"rows": rows, "regressed": False, "exempt": False}
    gated_baselines = {}
    for metric in case["metrics"]:
        name, value = metric["name"], metric["value"]
        maximize = metric["direction"] == "maximize"
        pin = (pinned or {}).get(name, {})
        if pin.get("baseline", 0) > 0:
            baseline = pin["baseline"]
        elif history.get(name):
            baseline = pandas_baseline(history[name] + [[case["measured_at"], value]], maximize)
        else:
            continue
        if not baseline > 0:
            continue
        key = "threshold_pre_merge" if mode == "pre-merge" else "threshold_post_merge"
        threshold = pin.get(key) if pin.get(key, 0) > 0 else (0.10 if mode == "pre-merge" else 0.05)
        regressed = metric["gated"] and misses(value, baseline, threshold, maximize)
        rows[name] = {"baseline": baseline, "threshold": threshold, "regressed": regressed,
                      "change": (value - baseline) / baseline}
        if metric["gated"]:
            pre = pin.get("threshold_pre_merge") if pin.get("threshold_pre_merge", 0) > 0 else 0.10
            gated_baselines[name] = (baseline, pre, maximize)
    regressed = any(row["regressed"] for row in rows.values())
    exempt = False
    if mode == "pre-merge" and regressed:
        for name, (baseline, pre, maximize) in gated_baselines.items():
            latest = case["latest_post_merge"].get(name)
            usable = isinstance(latest, (int, float)) and math.isfinite(latest) and latest > 0
            if usable and misses(latest, baseline, pre, maximize):
                exempt = True
    return {"rows": rows, "regressed": regressed, "exempt": exempt}


def seeded_case(seed):
    rng = random.Random(seed)
    mode = rng.choice(["pre-merge", "post-merge", "warn"])
    history, metrics, latest = {}, [], {}
    days = rng.randint(0 if seed % 10 == 0 else 1, 90)
    for name, (maximize, gated) in METRICS.items():
        level = rng.uniform(50, 20000)
        points = []
        for day in range(days):
            if rng.random() < 0.25:
                continue  # a day without a post-merge run
            for _ in range(rng.randint(1, 4)):
                at = pd.Timestamp("2026-09-01T00:00:00Z") + pd.Timedelta(days=day, seconds=rng.randint(0, 86399))
                points.append([at.strftime("%Y-%m-%dT%H:%M:%SZ"), level * rng.uniform(0.9, 1.1)])
        points.sort()
        history[name] = points
        factor = rng.choice([rng.uniform(0.7, 0.95), rng.uniform(0.95, 1.05), rng.uniform(1.05, 1.3)])
        metrics.append({"name": name, "value": level * factor,
                        "direction": "maximize" if maximize else "minimize",
                        "gated": gated or name == "p99_itl"})
        # The latest post-merge record: fine, regressed itself, or unusable.
        kind = rng.choice(["fine", "regressed", "zero", "negative", "absent"])
        if kind == "fine":
            latest[name] = level
        elif kind == "regressed":
            latest[name] = level * (0.8 if maximize else 1.25)
        elif kind == "zero":
            latest[name] = 0
        elif kind == "negative":
            latest[name] = -level
    case = {"mode": mode, "measured_at": "2026-12-02T10:00:00Z", "metrics": metrics,
            "history": history, "latest_post_merge": latest}
    if seed % 5 == 0:  # a pinned file: some baselines and thresholds
        case["pinned"] = {"total_token_throughput": {"baseline": metrics[0]["value"] * rng.uniform(0.9, 1.2),
                                                     "threshold_pre_merge": 0.15,
                                                     "threshold_post_merge": 0.02},
                          "p99_itl": {"threshold_post_merge": 0.08}}
    return case


def main():
    binary = sys.argv[1]
    checked_rows = exempt_cases = failing_cases = 0
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, 51):
            case = seeded_case(seed)
            path = f"{tmp}/case{seed}.json"
            with open(path, "w") as out:
                json.dump(case, out)
            done = subprocess.run([binary, "perf", "evaluate", path], capture_output=True,
                                  text=True, timeout=60)
            if done.returncode != 0:
                problems.append(f"seed {seed}: exit {done.returncode}: {done.stderr}")
                continue
            gate = json.loads(done.stdout)["gate"]
            want = expected_gate(case)
            got_rows = {row["metric"]: row for row in gate["rows"]}
            if set(got_rows) != set(want["rows"]):
                problems.append(f"seed {seed}: rows {sorted(got_rows)} != {sorted(want['rows'])}")
                continue
            for name, row in want["rows"].items():
                got = got_rows[name]
                if not math.isclose(got["baseline"], row["baseline"], rel_tol=1e-9, abs_tol=0):
                    problems.append(f"seed {seed} {name}: baseline {got['baseline']!r} != {row['baseline']!r}")
                if got["threshold"] != row["threshold"] or got["regressed"] != row["regressed"]:
                    problems.append(f"seed {seed} {name}: {got} != {row}")
                checked_rows += 1
            if gate["regressed"] != want["regressed"] or gate["exempt"] != want["exempt"]:
                problems.append(f"seed {seed}: regressed/exempt {gate['regressed']}/{gate['exempt']} "
                                f"!= {want['regressed']}/{want['exempt']}")
            exempt_cases += want["exempt"]
            failing_cases += want["regressed"] and not want["exempt"] and case["mode"] != "warn"
    print(f"{checked_rows} baselines compared, {failing_cases} failing and {exempt_cases} exempt "
          f"cases of 50")
    # The seeds must exercise what they claim to: exemptions and failures both occur.
    if exempt_cases == 0 or failing_cases == 0 or checked_rows < 150:
        problems.append("the seeded histories do not cover exempt and failing cases")
    for problem in problems:
        print("FAIL", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
