#!/bin/bash
# History benchmark (bench/README.md): what recording a verdict in the history store costs
# `trtllm-run run --scenario local_direct --custom-cmd true` (N interleaved runs with
# --history STORE and with --no-history: medians and their difference), and how long
# `trtllm-run history flaky` takes over a store of R test rows (the median of 10 runs).
#   bench/history.sh [--runs N] [--rows R] [--check] [--smoke] [--postgres URL]
#   (BUILD_DIR: default build)
# Defaults: 200 runs each, 100,000 rows (~1 min). --check: exit 1 when the recording cost is
# over 20 ms or history flaky over 200 ms. --smoke: 10 runs, 10,000 rows, no targets.
# --postgres URL: the same two measures on a PostgreSQL store, after the SQLite ones (a
# scratch database: R test rows are added to it; its password from ~/.pgpass or
# $PGPASSFILE; tests/services/postgres.sh gives one). Not checked against the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin="$build_dir/bin/trtllm-run"
runs=200
rows=100000
check=0
postgres=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --check) check=1; shift ;;
    --smoke) runs=10; rows=10000; shift ;;
    --postgres) postgres=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--rows R] [--check] [--smoke] [--postgres URL]" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run first (BUILD_DIR=...)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "sqlite3 not found (apt-get install sqlite3)" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/history_bench.XXXXXX")
trap 'rm -rf -- "$root"' EXIT
store=$root/data/history.sqlite

# Seconds (microsecond resolution) one command took, appended to the file $1; the command
# must succeed.
time_one() {
  local out=$1 start end
  shift
  start=$EPOCHREALTIME
  "$@" >/dev/null 2>"$root/stderr" </dev/null || { cat "$root/stderr" >&2; exit 1; }
  end=$EPOCHREALTIME
  echo "$start $end" | awk '{printf "%.6f\n", $2 - $1}' >>"$out"
  if grep -q "not recorded in the history" "$root/stderr"; then cat "$root/stderr" >&2; exit 1; fi
}

median() { sort -g "$1" | awk '{v[NR] = $1} END { printf "%.4f\n", v[int((NR + 1) / 2)] }'; }

# 1. The cost of recording: the same run with and without the store, interleaved.
for ((i = 0; i < runs; ++i)); do
  time_one "$root/with" "$bin" run --scenario local_direct --custom-cmd true \
    --repo-root "$root" --model-name "bench$i" --history "$store"
  time_one "$root/without" "$bin" run --scenario local_direct --custom-cmd true \
    --repo-root "$root" --model-name "bench$i" --no-history
  rm -rf -- "$root/work_dirs"
done
recorded=$(sqlite3 "$store" "SELECT COUNT(*) FROM cases")
[[ $recorded == "$runs" ]] || { echo "expected $runs recorded cases, found $recorded" >&2; exit 1; }
with=$(median "$root/with")
without=$(median "$root/without")
cost_ms=$(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.1f", (a - b) * 1000 }')
echo "== recording a verdict: trtllm-run run --scenario local_direct --custom-cmd true, $runs interleaved runs each"
printf "%-44s %10s\n" "command" "p50 (s)"
printf "%-44s %10s\n" "run ... --history STORE" "$with"
printf "%-44s %10s\n" "run ... --no-history" "$without"
printf "%-44s %10s\n" "difference (ms, target <= 20)" "$cost_ms"

# 2. history flaky over $rows test rows: 10 tests per case, 1,000 tests, 20 commits,
# 5% failures (a quarter of them passing on a rerun), over the last 60 days. A test's cases
# all share one commit (c.id mod 100 fixes both), so its outcome must vary with c.id / 100:
# otherwise every test always passes or always fails and nothing is flaky.
cases=$((rows / 10))
sqlite3 "$store" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $cases)
INSERT INTO cases(recorded_at, kind, name, commit_sha, branch, scenario, verdict, duration_seconds, work_dir)
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-' || (i % 60) || ' days', '-' || (i % 86400) || ' seconds'),
       'stage', 'bench shard ' || (i % 4), printf('%040d', i % 20), 'main', 'local_slurm', 'PASSED',
       60, '/w/' || i
FROM n;
WITH RECURSIVE t(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM t WHERE k < 9)
INSERT INTO tests(case_id, node_id, outcome, duration_seconds, attempt, signature, commit_sha, recorded_at)
SELECT c.id, 'defs/test_' || ((c.id * 10 + k) % 1000) || '.py::test_x',
       CASE WHEN (c.id * 7 + k * 13 + c.id / 100) % 20 = 0 THEN 'failed' ELSE 'passed' END,
       1 + (c.id + k) % 30, CASE WHEN (c.id * 7 + k * 13 + c.id / 100) % 80 = 1 THEN 1 ELSE 0 END,
       '', c.commit_sha, c.recorded_at
FROM cases c, t WHERE c.name LIKE 'bench shard %';
COMMIT;
SQL
test_rows=$(sqlite3 "$store" "SELECT COUNT(*) FROM tests")
for ((i = 0; i < 10; ++i)); do
  time_one "$root/flaky" "$bin" history flaky --history "$store" --json
  time_one "$root/flaky30" "$bin" history flaky --days 30 --history "$store" --json
  time_one "$root/floor" "$bin" --version
done
flaky=$(median "$root/flaky")
flaky30=$(median "$root/flaky30")
floor=$(median "$root/floor")
found=$("$bin" history flaky --history "$store" | head -1 | cut -d" " -f1-3)
# The timing means nothing over a store the query finds nothing in: the seeding makes
# tests with both outcomes on one commit, and the query must see them.
if [[ ! $found =~ ^[1-9] ]]; then
  echo "bench/history.sh: the seeded store has no flaky test ($found): fix the seeding" >&2
  exit 1
fi
echo
echo "== history flaky over $test_rows test rows ($found)"
printf "%-44s %10s\n" "command" "p50 (s)"
printf "%-44s %10s\n" "history flaky (target <= 0.2)" "$flaky"
printf "%-44s %10s\n" "history flaky --days 30" "$flaky30"
printf "%-44s %10s\n" "trtllm-run --version (process floor)" "$floor"
# 3. The same on PostgreSQL (--postgres URL): recording, then history flaky over R more rows.
if [[ -n $postgres ]]; then
  command -v psql >/dev/null || { echo "psql not found (apt-get install postgresql-client)" >&2; exit 2; }
  pg() { psql -X -q -w -At -v ON_ERROR_STOP=1 "$postgres" "$@"; }
  "$bin" history flaky --history "$postgres" >/dev/null  # creates the schema when new
  before=$(pg -c "SELECT COUNT(*) FROM cases")
  for ((i = 0; i < runs; ++i)); do
    time_one "$root/pg_with" "$bin" run --scenario local_direct --custom-cmd true \
      --repo-root "$root" --model-name "bench$i" --history "$postgres"
    time_one "$root/pg_without" "$bin" run --scenario local_direct --custom-cmd true \
      --repo-root "$root" --model-name "bench$i" --no-history
    rm -rf -- "$root/work_dirs"
  done
  after=$(pg -c "SELECT COUNT(*) FROM cases")
  [[ $((after - before)) == "$runs" ]] ||
    { echo "expected $runs more cases in $postgres, found $((after - before))" >&2; exit 1; }
  pg_with=$(median "$root/pg_with")
  pg_without=$(median "$root/pg_without")
  pg_cost_ms=$(awk -v a="$pg_with" -v b="$pg_without" 'BEGIN { printf "%.1f", (a - b) * 1000 }')
  pg <<SQL
BEGIN;
INSERT INTO cases(recorded_at, kind, name, commit_sha, branch, scenario, verdict, duration_seconds, work_dir)
SELECT to_char(now() AT TIME ZONE 'UTC' - (i % 60) * interval '1 day' - (i % 86400) * interval '1 second',
               'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       'stage', 'bench shard ' || (i % 4), lpad((i % 20)::text, 40, '0'), 'main', 'local_slurm',
       'PASSED', 60, '/w/' || i
FROM generate_series(1, $cases) i;
INSERT INTO tests(case_id, node_id, outcome, duration_seconds, attempt, signature, commit_sha, recorded_at)
SELECT c.id, 'defs/test_' || ((c.id * 10 + k) % 1000) || '.py::test_x',
       CASE WHEN (c.id * 7 + k * 13 + c.id / 100) % 20 = 0 THEN 'failed' ELSE 'passed' END,
       1 + (c.id + k) % 30, CASE WHEN (c.id * 7 + k * 13 + c.id / 100) % 80 = 1 THEN 1 ELSE 0 END,
       '', c.commit_sha, c.recorded_at
FROM cases c, generate_series(0, 9) k WHERE c.name LIKE 'bench shard %' AND c.id > (SELECT COALESCE(MAX(case_id), 0) FROM tests);
COMMIT;
ANALYZE cases;
ANALYZE tests;
SQL
  pg_rows=$(pg -c "SELECT COUNT(*) FROM tests")
  for ((i = 0; i < 10; ++i)); do
    time_one "$root/pg_flaky" "$bin" history flaky --history "$postgres" --json
  done
  echo
  echo "== PostgreSQL ($postgres): the same runs, and history flaky over $pg_rows test rows"
  printf "%-44s %10s\n" "command" "p50 (s)"
  printf "%-44s %10s\n" "run ... --history postgresql://..." "$pg_with"
  printf "%-44s %10s\n" "run ... --no-history" "$pg_without"
  printf "%-44s %10s\n" "difference (ms)" "$pg_cost_ms"
  printf "%-44s %10s\n" "history flaky" "$(median "$root/pg_flaky")"
fi
if [[ $check == 1 ]]; then
  miss=0
  if awk -v c="$cost_ms" 'BEGIN { exit !(c > 20) }'; then
    echo "MISS: recording costs $cost_ms ms > 20 ms" >&2
    miss=1
  fi
  if awk -v f="$flaky" 'BEGIN { exit !(f > 0.2) }'; then
    echo "MISS: history flaky took $flaky s > 0.2 s" >&2
    miss=1
  fi
  exit $miss
fi
