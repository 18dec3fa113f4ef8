#!/bin/bash
# A real PostgreSQL 15 server for the test suite's shared-history tests (Debian 12, root).
#
#   tests/services/postgres.sh ensure   start it unless it already answers (idempotent)
#   tests/services/postgres.sh stop     stop it (pg_ctl, fast shutdown)
#   tests/services/postgres.sh status   exit 0 when the test role can log in
#
# A private cluster, run by the `postgres` system user (the server refuses root): data in
# $DATA, listening on 127.0.0.1:$PORT and on a unix socket in $SOCKDIR. Role trtllm_test
# (LOGIN CREATEDB: each test makes its own database) owns database trtllm_history_test.
# Password authentication (scram-sha-256) for every client but the postgres superuser;
# the role's password "trtllm-pg-test-pw" is a test secret, in $CLIENT/pgpass (mode 0600)
# only: tests give libpq PGPASSFILE=$CLIENT/pgpass and grep for the password to prove it
# never leaks into argv, logs, results or messages. A test server: fsync off.
# Log: $DATA/server.log.
set -euo pipefail

DATA=/var/lib/trtllm-test-postgres/data
SOCKDIR=/run/trtllm-test-postgres
CLIENT=/run/trtllm-test-postgres/client
PORT=5499
ROLE=trtllm_test
DATABASE=trtllm_history_test
PASSWORD=trtllm-pg-test-pw
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

as_postgres() { runuser -u postgres -- "$@"; }

status() {
  [[ -n $BIN && -s $CLIENT/pgpass ]] &&
    PGPASSFILE=$CLIENT/pgpass PGCONNECT_TIMEOUT=5 timeout 10 psql -w -X -q -At \
      "postgresql://$ROLE@127.0.0.1:$PORT/$DATABASE" -c 'SELECT 1' 2>/dev/null | grep -qx 1
}

stop() {
  [[ -n $BIN && -s $DATA/postmaster.pid ]] || return 0
  as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null || true
}

start() {
  [[ -n $BIN ]] || {
    echo "postgres.sh: no PostgreSQL server (apt-get install postgresql)" >&2
    exit 1
  }
  mkdir -p "$SOCKDIR" "$CLIENT" "$(dirname "$DATA")"
  chown postgres:postgres "$SOCKDIR" "$(dirname "$DATA")"
  chmod 0755 "$SOCKDIR"
  chmod 0700 "$CLIENT"
  if [[ ! -s $DATA/PG_VERSION ]]; then
    rm -rf "$DATA"
    as_postgres "$BIN/initdb" -D "$DATA" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  fi
  cat >"$DATA/pg_hba.conf" <<EOF
local all postgres peer
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
EOF
  cat >"$DATA/postgresql.auto.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCKDIR'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  chown postgres:postgres "$DATA/pg_hba.conf" "$DATA/postgresql.auto.conf"
  if ! as_postgres "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 start >/dev/null || {
      tail -20 "$DATA/server.log" >&2
      exit 1
    }
  else
    as_postgres "$BIN/pg_ctl" -D "$DATA" reload >/dev/null
  fi
  # The password goes to psql on stdin, never in argv.
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -h "$SOCKDIR" -p "$PORT" -d postgres >/dev/null <<SQL
SELECT 'CREATE ROLE $ROLE' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE')\\gexec
ALTER ROLE $ROLE WITH LOGIN CREATEDB PASSWORD '$PASSWORD';
SELECT 'CREATE DATABASE $DATABASE OWNER $ROLE'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DATABASE')\\gexec
SQL
  (umask 077 && echo "*:$PORT:*:$ROLE:$PASSWORD" >"$CLIENT/pgpass")
  for _ in $(seq 50); do
    status && return 0
    sleep 0.2
  done
  echo "postgres.sh: the server does not let $ROLE in; see $DATA/server.log" >&2
  tail -20 "$DATA/server.log" >&2 || true
  exit 1
}

case ${1:-ensure} in
  ensure)
    status || start
    echo "postgres: postgresql://$ROLE@127.0.0.1:$PORT/$DATABASE (PGPASSFILE=$CLIENT/pgpass)"
    ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 ensure|start|stop|status" >&2
    exit 2
    ;;
esac
