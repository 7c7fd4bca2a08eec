#!/usr/bin/env bash
# Start a throw-away PostgreSQL 15 cluster for the store tests and print its URL.
#
#   export NIMO_TEST_POSTGRES_URL=$(scripts/start-postgres.sh)
#   scripts/start-postgres.sh --stop      # stop it again
#
# Idempotent: re-running reuses the cluster and the running server. The cluster lives in
# $NIMO_PG_DIR (default /run/nimo-postgres as root, where only root can make names, else
# ${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/nimo-postgres-UID; a symlink there is refused, never
# followed by chown), listens on 127.0.0.1:$NIMO_PG_PORT
# (default 55432) with trust authentication, and holds the database nimo_test. When run as
# root the server runs as the "postgres" user (initdb refuses root).
set -euo pipefail

PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
if [[ $(id -u) -eq 0 ]]; then
  DIR=${NIMO_PG_DIR:-/run/nimo-postgres}
else
  DIR=${NIMO_PG_DIR:-${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/nimo-postgres-$(id -u)}
fi
PORT=${NIMO_PG_PORT:-55432}
DB=nimo_test
URL="postgresql://postgres@127.0.0.1:${PORT}/${DB}"

if [[ -z "$PGBIN" || ! -x "$PGBIN/pg_ctl" ]]; then
  echo "start-postgres: no PostgreSQL server binaries (apt-get install postgresql)" >&2
  exit 1
fi

as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [[ "${1:-}" == "--stop" ]]; then
  if [[ -f "$DIR/data/postmaster.pid" ]]; then
    as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
  fi
  exit 0
fi

if [[ -L "$DIR" ]]; then
  echo "start-postgres: $DIR is a symbolic link; refusing it (set NIMO_PG_DIR)" >&2
  exit 1
fi
mkdir -p -m 700 "$DIR"
if [[ $(id -u) -eq 0 ]]; then chown -h postgres "$DIR"; fi
owner=$(stat -c %U "$DIR")
if [[ ! -d "$DIR" || -L "$DIR" || ( "$owner" != postgres && "$owner" != "$(id -un)" ) ]]; then
  echo "start-postgres: $DIR is not a directory of postgres or $(id -un); refusing it" >&2
  exit 1
fi

if [[ ! -f "$DIR/data/PG_VERSION" ]]; then
  as_pg "$PGBIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1 \
    || { cat "$DIR/initdb.log" >&2; exit 1; }
fi

if ! as_pg "$PGBIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
  as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
    -o "-h 127.0.0.1 -p ${PORT} -k ${DIR}" start >&2 \
    || { tail -n 20 "$DIR/server.log" >&2; exit 1; }
fi

if ! as_pg "$PGBIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname='${DB}'" | grep -q 1; then
  as_pg "$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DB"
fi

echo "$URL"
