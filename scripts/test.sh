#!/usr/bin/env bash
# Run the whole test suite: unit tests, store tests against a real PostgreSQL server, and the
# integration tests on a lab of network namespaces (built and removed by the tests' fixture).
# Runs in the virtual environment scripts/bootstrap.sh made (scripts/venv.sh). pytest's
# temporary directory is ours: a lab the tests could not take down (a killed session) is
# removed from there afterwards with `nimo lab down DIR`, and a failure to remove it fails
# this script. Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh

BASETEMP=$(mktemp -d "${TMPDIR:-/tmp}/nimo-test.XXXXXX")

cleanup() {
  local status=$?
  while IFS= read -r state; do
    local dir
    dir=$(dirname "$state")
    echo "test.sh: removing a lab the tests left in $dir" >&2
    if ! python3 -m workbench lab down "$dir" >&2; then
      echo "test.sh: error: could not remove the lab in $dir" >&2
      status=1
    fi
  done < <(find "$BASETEMP" -name lab.json 2>/dev/null)
  if ! bash scripts/start-postgres.sh --stop >/dev/null; then
    echo "test.sh: warning: could not stop the test PostgreSQL server" >&2
  fi
  rm -rf "$BASETEMP"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if url=$(bash scripts/start-postgres.sh); then
  export NIMO_TEST_POSTGRES_URL="$url"
else
  echo "test.sh: PostgreSQL did not start; the postgres-marked tests will fail" >&2
fi

ruff check nimo workbench tests benchmarks examples scripts || exit 1
mypy || exit 1
python3 -m pytest -q -p no:cacheprovider --basetemp "$BASETEMP" "$@"
